/*
 * bundle.json: the input is written as bundle.json into an evidence
 * directory with fixed raw files and a SHA256SUMS that lists it, then
 * read with bundle_read() as an import would.
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
	evidence_dir();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session_data d;

	evidence_sums((const char *)data, size);
	if (bundle_read(evidence_dir(), NULL, 0, &d) == 0)
		session_data_release(&d);
	return 0;
}
