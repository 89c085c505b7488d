/* Provenance as the gate uses it: built for a selection (each side of a
 * comparison), rendered under a title and heading level of the caller's
 * choice, written into the caller's JSON. */
#include "test.h"
#include "analysis/provenance.h"
#include "analysis/table.h"
#include "evidence/bundle.h"
#include "evidence/runrec.h"
#include "evidence/store.h"
#include "base/json.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dbpath[256];

static const char *const evidence[] = {
	"evidence/cua-lume-2026-08-09-m1-ultra",
	"evidence/cua-lume-2026-08-10-m1-ultra-gemma4",
};

/* A store holding the published evidence (sessions 1 and 2), or NULL. */
static struct store *
published(void)
{
	struct store *s;
	size_t i;

	snprintf(dbpath, sizeof(dbpath), "/tmp/shimbench-unit-prov-%ld.db",
		 (long)getpid());
	unlink(dbpath);
	if (store_open(&s, dbpath) < 0)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(evidence); i++) {
		struct session_data d;
		char *map = xstrfmt("%s/mapping.json", evidence[i]);
		int64_t id;
		int already, rc;

		error_silent++;
		rc = bundle_read(evidence[i], map, 0, &d);
		error_silent--;
		free(map);
		CHECK(rc == 0);
		if (rc == 0) {
			CHECK(store_session_save(s, &d, &id, &already) == 0);
			CHECK(id == (int64_t)i + 1);
		}
		session_data_release(&d);
	}
	return s;
}

static void
done(struct store *s)
{
	char p[300];

	store_close(s);
	unlink(dbpath);
	snprintf(p, sizeof(p), "%s-wal", dbpath);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", dbpath);
	unlink(p);
}

static void
test_two_sides(void)
{
	struct store *s = published();
	struct provenance *a = NULL, *b = NULL, *none = NULL;
	struct buf md = BUF_INIT, js = BUF_INIT;
	struct json *v;
	struct jw w;

	if (!s)
		return;
	CHECK(provenance_select(s, "session=1,runtime=llama.cpp,variant=stock",
				&a) == 0);
	CHECK(provenance_select(s, "session=latest", &b) == 0);
	CHECK(a && a->ns == 1 && a->s[0].id == 1 && a->s[0].runs == 1);
	CHECK(a && a->ne == 1 && !strcmp(a->e[0].target, "guest"));
	CHECK(a && !strcmp(a->e[0].os, "macOS 26.5.2 (build 25F84)"));
	CHECK(a && !strcmp(a->measured_from, "2026-08-09T18:13:03Z"));
	CHECK(b && b->ns == 1 && b->s[0].id == 2 && b->ne == 2);
	CHECK(b && b->nm == 1 && !strcmp(b->m[0].sha256,
		"93567e57a8fe10b23569b9d9ec38cd005deedf71e29477c421a4b83f418a538b"));
	CHECK(b && b->nwarnings == 1);

	/* a terminal (160 columns): the targets' wide table as list items */
	provenance_render_md(a, "Provenance: baseline", 4, &md);
	CHECK(strstr(md.buf, "- **Target**: guest\n  - Sessions: 1\n") != NULL);
	buf_reset(&md);
	/* the gate's Markdown summary (a file: every column): a section per
	 * side under its own heading */
	table_md_width(0);
	provenance_render_md(a, "Provenance: baseline", 4, &md);
	provenance_render_md(b, "Provenance: candidate", 4, &md);
	table_md_width(TABLE_MD_WIDTH);
	CHECK(strstr(md.buf, "#### Provenance: baseline\n") != NULL);
	CHECK(strstr(md.buf, "#### Provenance: candidate\n") != NULL);
	CHECK(strstr(md.buf, "##### Sessions\n") != NULL);
	CHECK(strstr(md.buf, "| guest  | 1        |") != NULL);
	CHECK(strstr(md.buf, "- **Warning:** session 2: ") != NULL);

	/* the gate's JSON: one object per side where the caller puts it */
	jw_init(&w, &js, 0);
	jw_object(&w);
	jw_key(&w, "baseline");
	provenance_json(a, &w);
	jw_key(&w, "candidate");
	provenance_json(b, &w);
	jw_end(&w);
	v = json_parse(js.buf, js.len, "provenance");
	CHECK(v != NULL);
	CHECK(json_size(json_get(json_get(v, "baseline"), "sessions")) == 1);
	CHECK(!strcmp(json_get_str(json_at(json_get(json_get(v, "candidate"),
		"environments"), 0), "target"), "host"));
	json_free(v);

	/* nothing selected: said so, never an empty section */
	CHECK(provenance_select(s, "session=99", &none) == 0);
	CHECK(none && none->ns == 0);
	buf_reset(&md);
	provenance_render_md(none, NULL, 2, &md);
	CHECK(strstr(md.buf, "## Provenance: who and what was measured\n") != NULL);
	CHECK(strstr(md.buf, "No stored results selected") != NULL);
	provenance_free(none);
	error_silent++;
	CHECK(provenance_select(s, "session", &none) == -1 && none == NULL);
	error_silent--;

	provenance_free(a);
	provenance_free(b);
	buf_release(&md);
	buf_release(&js);
	done(s);
}

int
main(void)
{
	static const struct test_case tests[] = {
		{ "provenance of each side, md and json", test_two_sides },
	};
	return test_main(tests, ARRAY_SIZE(tests));
}
