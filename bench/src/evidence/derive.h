#ifndef EVIDENCE_DERIVE_H
#define EVIDENCE_DERIVE_H

/*
 * What the raw files of a run say, derived the same way by the run engine
 * and by the importer, so that a bundle can never claim more than its
 * files hold: the results (llama-bench or MLX-LM output parsed by the
 * run's runtime), the capability facts of its stderr (and probe output),
 * the injection verification against the run's expected markers and
 * probe expectations, and the status when the output is cut off or
 * empty.
 */

struct run_data;
struct buf;

/*
 * Parses rd->r.stdout_text into rd->lb by rd->r.runtime, and dates a run
 * that has no started_at by its output (llama-bench's test_time). 0, or
 * -1 after error() naming the file (rd->r.stdout_path) and the row or
 * byte.
 */
int derive_results(struct run_data *rd);

/*
 * Sets capabilities_json, verification and verification_detail of rd->r
 * from its whole stderr and probe output. A run with no expected markers
 * and no probe expectations is "not-required". Returns 0, or -1 after
 * error() for an invalid expectation (a blank marker, markers that are not
 * an array of strings, probe expectations that are not an object).
 */
int derive_verification(struct run_data *rd);

/*
 * Downgrades an "ok" status that the output contradicts: "incomplete"
 * when the output was cut off, "failed" (with the reason in error) when
 * it holds no result.
 */
void derive_status(struct run_data *rd);

#endif
