#ifndef RUN_TARGET_H
#define RUN_TARGET_H

/*
 * One command on a target, through its transport: capture a command's
 * stdout, hash a file there, fingerprint the target.
 */

#include "models/hash.h"

struct plan_target;
struct store;
struct buf;
struct transport_cmd;

/*
 * SHA-256 of a file on the target: read here for a local target (through
 * the store's hash cache when s is not NULL), by sha256sum or shasum
 * there for a remote one. 0, or -1 after error().
 */
int target_sha256(struct store *s, const struct plan_target *t,
		  const char *path, char hex[SHA256_HEX_LEN + 1]);

/*
 * Runs the fingerprint probe on t (with the GPU probe when gpu is 1) and
 * fills fp; the pre-flight warnings are appended to *warnings (*nwarn of
 * them, strv). 0, or -1 after error().
 */
struct fingerprint;
int target_fingerprint(const struct plan_target *t, int gpu,
		       struct fingerprint *fp, char ***warnings, size_t *nwarn);
/*
 * Runs the GPU probe on t and adds its answer to fp (see
 * fingerprint_add_gpu_probe()): 1 when fp gained "gpu", 0 when not, -1
 * after error().
 */
int target_fingerprint_gpu(const struct plan_target *t,
			   struct fingerprint *fp);

/* A merged transport's stdout: keeps what comes before the separator. */
void target_cut_merged(const struct transport_cmd *tc, struct buf *out);

/*
 * Copies the local file src to dst on target t and checks what arrived:
 * a local target by a copy here; a remote one by scp to
 * target_address() as the target's user (else its transport's default
 * user: lume's "lume", tart's "admin") with its ssh_options, into DST.part, then `mv` into place
 * over the transport. The file's SHA-256 on the target must be sha256
 * (the local file's). executable: mode 755 instead of 644. 0, or -1
 * after error().
 */
int target_install_file(const struct plan_target *t, const char *src,
			const char *dst, int executable, const char *sha256);

/* How a check of doctor came out; check_status_name() gives the word
 * doctor prints ("ok", "warning", "missing", "error", "mismatch"). */
enum check_status {
	CHECK_OK,
	CHECK_WARNING,       /* usable, with a caveat */
	CHECK_MISSING,
	CHECK_ERROR,
	CHECK_MISMATCH,      /* a pinned SHA-256 differs (exit 1, not 3) */
};
const char *check_status_name(enum check_status s);

/* One finding of target_doctor(). */
struct target_check {
	char *name;          /* "vm", "reachable", "llama-bench", "shim(VARIANT)", … */
	enum check_status status;
	char *detail;        /* one line */
	char *fix;           /* what to do, or NULL */
};

/*
 * Checks what running plan p needs on its target t, in order: the
 * transport's program here (ssh, lume, tart); the VM running with an
 * address (lume get, tart list); the target reachable through the
 * transport; SIP (macOS targets); llama-bench (or MLX-LM's benchmark)
 * there with its version; each injected library's SHA-256 against the
 * plan's pin; each probe program; each model file. Stops after a check
 * that leaves the rest meaningless (program missing, VM down,
 * unreachable). Appends to *v (n entries; free with
 * target_checks_free()).
 */
struct plan;
void target_doctor(const struct plan *p, const struct plan_target *t,
		   struct target_check **v, size_t *n);
void target_checks_free(struct target_check *v, size_t n);

#endif
