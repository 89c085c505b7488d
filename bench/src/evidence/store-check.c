#define _POSIX_C_SOURCE 200809L
/*
 * The store's integrity check (store_check()): SQLite's quick_check and
 * every stored raw output against its recorded SHA-256.
 */
#include "evidence/store.h"
#include "evidence/store-internal.h"
#include "models/hash.h"
#include "base/util.h"

#include <sqlite3.h>
#include <string.h>
#include <strings.h>

/*
 * The raw files stored with each run against their recorded SHA-256: a
 * zeroed overflow page holds no b-tree structure for quick_check to miss
 * or catch, only content, and run records keep their later columns
 * (verification, start time) behind the raw text.
 */
static int
check_raw_copies(struct store *s, struct buf *msg)
{
	static const char *const cols[][2] = {
		{ "stdout_text", "stdout_sha256" },
		{ "stderr_text", "stderr_sha256" },
		{ "probe_text", "probe_sha256" },
	};
	sqlite3_stmt *st = sq_prepare(s, "SELECT id, seq, session_id,"
				   " stdout_text, stdout_sha256, stderr_text,"
				   " stderr_sha256, probe_text, probe_sha256"
				   " FROM runs");
	int rc, bad = 0;
	size_t k;

	if (!st)
		return 1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (k = 0; k < ARRAY_SIZE(cols); k++) {
			const void *p = sqlite3_column_blob(st, 3 + 2 * (int)k);
			size_t n = (size_t)sqlite3_column_bytes(st, 3 + 2 * (int)k);
			const unsigned char *want =
				sqlite3_column_text(st, 4 + 2 * (int)k);
			char have[65];

			if (sqlite3_column_type(st, 3 + 2 * (int)k) == SQLITE_NULL ||
			    !want)
				continue;
			hash_buf_sha256(p ? p : "", n, have);
			if (strcasecmp(have, (const char *)want)) {
				if (bad++ < 3)
					buf_addf(msg, "%srun %lld of session %lld: "
						 "its stored %s does not match its "
						 "SHA-256", msg->len ? "; " : "",
						 (long long)sqlite3_column_int64(st, 1),
						 (long long)sqlite3_column_int64(st, 2),
						 cols[k][0]);
			}
		}
	}
	if (rc != SQLITE_DONE) {
		buf_addf(msg, "%s%s", msg->len ? "; " : "",
			 sqlite3_errmsg(s->db));
		bad++;
	}
	sqlite3_finalize(st);
	return bad;
}

int
store_check(struct store *s)
{
	sqlite3_stmt *st;
	struct buf msg = BUF_INIT;
	int rc, n = 0, ret = 0;

	sq_op_begin(s);
	st = sq_prepare(s, "PRAGMA quick_check");
	if (!st)
		return error("store '%s' is damaged; restore it from a backup "
			     "or import the evidence again", s->path);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		if (t && !strcmp(t, "ok") && n == 0)
			continue;
		if (n++ < 3)
			buf_addf(&msg, "%s%s", msg.len ? "; " : "", t ? t : "");
	}
	if (rc != SQLITE_DONE) {
		buf_addf(&msg, "%s%s", msg.len ? "; " : "",
			 sqlite3_errmsg(s->db));
		n++;
	}
	sqlite3_finalize(st);
	if (!n)
		n = check_raw_copies(s, &msg);
	if (n)
		ret = error("store '%s' is damaged (%s); restore it from a "
			    "backup or import the evidence again", s->path,
			    msg.buf);
	buf_release(&msg);
	return ret;
}
