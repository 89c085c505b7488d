/*
 * Mappings of raw evidence: the input is the mapping file of an evidence
 * directory with fixed raw files and their SHA256SUMS, read with
 * bundle_read() as `import --mapping` would.
 */
#include "fuzz.h"
#include "evidence-dir.h"
#include "evidence/bundle.h"
#include "evidence/runrec.h"
#include "base/util.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	error_silent = 1;
	evidence_sums(NULL, 0);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session_data d;

	evidence_put_mapping((const char *)data, size);
	if (bundle_read(evidence_dir(), evidence_mapping(), 0, &d) == 0)
		session_data_release(&d);
	return 0;
}
