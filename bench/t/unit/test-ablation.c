/* The ablation table and the capability facts, on hand-built reports. */
#include "test.h"
#include "analysis/ablation.h"
#include "analysis/capfacts.h"
#include "analysis/captable.h"
#include "analysis/report.h"
#include "analysis/table.h"
#include "evidence/caps.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>

/* A cell of one run with samples v[0..n). */
static void
cell(struct rep_cell *c, const char *variant, const char *role,
     const double *v, size_t n, const char *facts, const char *shim)
{
	memset(c, 0, sizeof(*c));
	c->variant = xstrdup(variant);
	c->role = xstrdup(role);
	c->ts = xcalloc(n, sizeof(double));
	memcpy(c->ts, v, n * sizeof(double));
	c->n = n;
	c->runs = 1;
	c->run_n = xcalloc(1, sizeof(size_t));
	c->run_n[0] = n;
	c->facts = facts ? xstrdup(facts) : NULL;
	c->shim_config = shim ? xstrdup(shim) : NULL;
	stats_summary(c->ts, c->n, &c->sum);
}

static void
release(struct rep_cell *c)
{
	free(c->variant);
	free(c->role);
	free(c->ts);
	free(c->run_n);
	free(c->facts);
	free(c->shim_config);
}

/* One workload: bare 100, shim 98, three ablation rows, stock 20. */
static void
build(struct report *r, struct rep_workload *w, int with_bare)
{
	static const double bare[] = { 99, 100, 101 }, shim[] = { 97, 98, 99 },
		fp16[] = { 79, 80, 81 }, coop[] = { 29, 30, 31 },
		odd[] = { 60, 61, 62 }, stock[] = { 19, 20, 21 };

	memset(r, 0, sizeof(*r));
	memset(w, 0, sizeof(*w));
	r->w = w;
	r->n = 1;
	w->model = "m";
	w->label = "M";
	w->runtime = "llama.cpp";
	w->test = "pp512";
	w->config_words = "";
	if (with_bare)
		cell(&w->host, "bare", "bare-metal", bare, 3,
		     "vulkan: fp16 1, int dot 1, matrix cores KHR_coopmat", NULL);
	cell(&w->shim, "shim", "shim", shim, 3, "vulkan: fp16 1",
	     "profile=shim hide=none");
	cell(&w->stock, "stock", "stock", stock, 3, "vulkan: fp16 0",
	     "profile=stock hide=coopmat,fp16");
	w->others = xcalloc(4, sizeof(*w->others));
	cell(&w->others[0], "shim-hide-fp16", "ablation", fp16, 3,
	     "vulkan: fp16 0", "profile=hide hide=fp16");
	cell(&w->others[1], "shim-hide-coopmat", "ablation", coop, 3,
	     "vulkan: matrix cores none", "profile=hide hide=coopmat");
	cell(&w->others[2], "odd", "ablation", odd, 3, NULL,
	     "profile=hide hide=fp16 | profile=hide hide=coopmat");
	cell(&w->others[3], "plain", "other", odd, 3, NULL, NULL);
	w->nothers = 4;
}

static void
unbuild(struct rep_workload *w)
{
	size_t i;

	release(&w->host);
	release(&w->shim);
	release(&w->stock);
	for (i = 0; i < w->nothers; i++)
		release(&w->others[i]);
	free(w->others);
}

static const char *
at(const struct table *t, size_t row, const char *col)
{
	size_t c;

	for (c = 0; c < t->ncols; c++)
		if (!strcmp(t->head[c], col))
			return t->cells[row][c];
	return NULL;
}

static void
test_table(void)
{
	struct report r;
	struct rep_workload w;
	struct table t;

	build(&r, &w, 1);
	CHECK(ablation_present(&r));
	ablation_table(&r, 1, &t);
	/* shim, then by cost (coopmat 70 %, odd, fp16 20 %), then stock;
	 * the row of role "other" is not an ablation row */
	CHECK(t.nrows == 5);
	if (t.nrows == 5) {
		CHECK_STR(at(&t, 0, "taken_away"), "nothing (shim)");
		CHECK_STR(at(&t, 1, "taken_away"), "coopmat");
		CHECK_STR(at(&t, 1, "percent_of_bare"), "30");
		CHECK_STR(at(&t, 1, "cost_percent"), "70");
		CHECK(atof(at(&t, 1, "percent_lo")) < 30 &&
		      atof(at(&t, 1, "percent_hi")) > 30);
		CHECK_NEAR(atof(at(&t, 1, "cost_lo")),
			   100 - atof(at(&t, 1, "percent_hi")), 1e-3);
		CHECK_STR(at(&t, 2, "taken_away"), "(its runs differ: profile=hide "
			  "hide=fp16 | profile=hide hide=coopmat)");
		CHECK_STR(at(&t, 3, "taken_away"), "fp16");
		CHECK_STR(at(&t, 3, "percent_of_bare"), "80");
		CHECK_STR(at(&t, 3, "capabilities"), "vulkan: fp16 0");
		CHECK_STR(at(&t, 3, "shim_config"), "profile=hide hide=fp16");
		CHECK_STR(at(&t, 4, "taken_away"), "everything (stock)");
		CHECK_STR(at(&t, 4, "percent_of_bare"), "20");
		CHECK_STR(at(&t, 0, "percent_of_bare"), "98");
	}
	table_release(&t);
	ablation_table(&r, 0, &t);
	CHECK(t.nrows == 5 && !strncmp(at(&t, 1, "% of bare (95 % CI)"),
				       "30.0 % (", 8));
	CHECK(t.nrows == 5 && !strncmp(at(&t, 1, "Cost (95 % CI)"), "70.0 % (", 8));
	CHECK(t.nrows == 5 && !strcmp(at(&t, 2, "Capabilities reported"),
				      "(none recorded)"));
	table_release(&t);
	unbuild(&w);
}

/* Without bare: rows, no percentages, and a note that says why. */
static void
test_no_bare(void)
{
	struct report r;
	struct rep_workload w;
	struct table t;
	struct buf b = BUF_INIT;

	build(&r, &w, 0);
	ablation_table(&r, 1, &t);
	CHECK(t.nrows == 5);
	CHECK(t.nrows && !at(&t, 1, "percent_of_bare")[0]);
	table_release(&t);
	ablation_notes(&r, &b);
	CHECK(strstr(b.buf, "M (llama.cpp) pp512 has no bare-metal run: no "
		     "percentages") != NULL);
	buf_release(&b);
	error_silent++;
	CHECK(ablation_render(&r, "xml", &b) == -1);
	error_silent--;
	buf_release(&b);
	unbuild(&w);
}

/* Metal markers: what differs from the shim's, numbers as printed. */
static void
test_metal_words(void)
{
	struct report r;
	struct rep_workload w;
	struct table t;

	build(&r, &w, 1);
	free(w.shim.shim_config);
	w.shim.shim_config = xstrdup("appleFamilyMax=1009");
	free(w.others[0].shim_config);
	w.others[0].shim_config = xstrdup("appleFamilyMax=1006");
	free(w.others[1].shim_config);
	w.others[1].shim_config = xstrdup("appleFamilyMax=1009 "
					  "maxThreadgroupMemory=16384");
	free(w.others[2].shim_config);
	w.others[2].shim_config = NULL;
	ablation_table(&r, 1, &t);
	CHECK(t.nrows == 5);
	if (t.nrows == 5) {
		CHECK_STR(at(&t, 1, "taken_away"), "maxThreadgroupMemory=16384");
		CHECK_STR(at(&t, 2, "taken_away"), "(no shim marker)");
		CHECK_STR(at(&t, 3, "taken_away"), "appleFamilyMax=1006");
	}
	table_release(&t);
	unbuild(&w);
}

static void
test_describe(void)
{
	static const char vk[] =
		"ggml_vulkan: Found 1 Vulkan devices:\n"
		"ggml_vulkan: 0 = NVIDIA H200 (NVIDIA) | uma: 0 | fp16: 1 | "
		"bf16: 1 | warp size: 32 | shared memory: 49152 | int dot: 1 | "
		"matrix cores: NV_coopmat2\n"
		"[VulkanCapabilities] Enabled for llama-bench (profile=hide "
		"hide=coopmat2)\n";
	static const char metal[] =
		"[LumeMetalCapabilities] Enabled for llama-bench "
		"(appleFamilyMax=1009 maxThreadgroupMemory=32768)\n"
		"ggml_metal_device_init: GPU name:   MTL0 (Apple Paravirtual "
		"device)\n"
		"ggml_metal_device_init: GPU family: MTLGPUFamilyApple9  (1009)\n"
		"ggml_metal_device_init: simdgroup reduction   = true\n"
		"ggml_metal_device_init: simdgroup matrix mul. = true\n"
		"ggml_metal_device_init: has bfloat            = true\n";
	struct caps c;
	char *s;

	caps_read(vk, strlen(vk), &c);
	s = capfacts_describe(&c);
	CHECK_STR(s, "vulkan: fp16 1, bf16 1, int dot 1, matrix cores "
		  "NV_coopmat2, shared memory 49152, warp size 32; shim: "
		  "profile=hide hide=coopmat2");
	free(s);
	s = capfacts_shim_config(&c);
	CHECK_STR(s, "profile=hide hide=coopmat2");
	free(s);
	caps_release(&c);
	caps_read(metal, strlen(metal), &c);
	s = capfacts_describe(&c);
	CHECK_STR(s, "metal: MTLGPUFamilyApple9, simdgroup reduction yes, "
		  "simdgroup matrix mul. yes, bfloat yes, paravirtual; shim: "
		  "appleFamilyMax=1009 maxThreadgroupMemory=32768");
	free(s);
	caps_release(&c);
	caps_read("no device here\n", 15, &c);
	s = capfacts_describe(&c);
	CHECK_STR(s, "");
	free(s);
	CHECK(capfacts_shim_config(&c) == NULL);
	caps_release(&c);
}

static void
test_captable(void)
{
	struct report r;
	struct rep_workload w;
	struct table t;

	build(&r, &w, 1);
	capfacts_table(&r, &t);
	/* bare, stock, shim, the four others */
	CHECK(t.nrows == 7);
	if (t.nrows == 7) {
		CHECK_STR(t.cells[0][0], "bare");
		CHECK_STR(t.cells[0][2], "pp512 100.00");
		CHECK_STR(t.cells[0][3], "vulkan: fp16 1, int dot 1, matrix "
			  "cores KHR_coopmat");
		CHECK_STR(t.cells[6][3], "(none recorded)");
	}
	table_release(&t);
	unbuild(&w);
}

static const struct test_case tests[] = {
	{ "the ablation table: taken away from the markers, % of bare, cost, "
	  "interval, order", test_table },
	{ "without bare: no percentages, and why", test_no_bare },
	{ "Metal markers name what differs from the shim's", test_metal_words },
	{ "capability facts of a Vulkan and a Metal process", test_describe },
	{ "each variant's speed beside its capabilities", test_captable },
};

TEST_MAIN(tests)
