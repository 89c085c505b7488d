#define _XOPEN_SOURCE 700
#if defined(__APPLE__)
#define _DARWIN_C_SOURCE
#endif
#include "cmd/cmd.h"
#include "models/hash.h"
#include "base/json.h"
#include "base/proc.h"
#include "evidence/store.h"
#include "run/plan.h"
#include "run/target.h"
#include "run/tools.h"
#include "base/files.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct doctor_opts {
	const char *llama_bench, *models_dir;
	int json;
};

#define DO struct doctor_opts
static const struct opt doctor_opts[] = {
	OPT_F("json", 0, DO, json, "one JSON object instead of lines"),
	OPT_S("llama-bench", 0, DO, llama_bench, "PATH",
	      "check this llama-bench"),
	OPT_S("models-dir", 0, DO, models_dir, "DIR",
	      "with PLAN: where manifest models live (default models)"),
	OPT_END
};

static int doctor_main(int argc, char **argv, struct cmd_ctx *ctx);

const struct command cmd_doctor = {
	.name = "doctor",
	.fn = doctor_main,
	.summary = "what is installed, found and reachable; how to fix the rest",
	.synopsis = "[--json] [--llama-bench PATH] [--models-dir DIR] [PLAN]",
	.description =
		"Reports, one line each, what shimbench needs and finds: llama-bench\n"
		"(path, where it was found, SHA-256 of the binary it runs, build,\n"
		"devices), llama-quantize, gnuplot, SQLite, cJSON, OpenSSL, the ssh\n"
		"client, chromium, and the store (--db): whether it opens and its\n"
		"schema version. Each missing piece comes with the command that fixes\n"
		"it.\n"
		"\n"
		"llama-bench is looked up in this order: --llama-bench, $LLAMA_BENCH,\n"
		"PATH, the provisioned .llama/bin/llama-bench (make llama-bench), and\n"
		"on macOS Homebrew (an installed shimbench also finds the one\n"
		"make install linked).\n"
		"\n"
		"With PLAN, also every target of the plan, one line each as\n"
		"TARGET/CHECK: the transport's program here (ssh, lume, tart), the\n"
		"VM running with an address (lume get, tart list), a command run\n"
		"there, SIP (macOS), llama-bench (or MLX-LM's benchmark) there and\n"
		"its version, each injected library's SHA-256 against the plan's\n"
		"pin, each probe program, each model file.\n",
	.opts = doctor_opts,
	.epilogue =
		"Exit: 0 when the essentials (llama-bench, the store) and every\n"
		"target of PLAN are usable; 1 when only a pinned SHA-256 differs;\n"
		"3 otherwise.\n",
	.max_args = 1,
};

struct check {
	const char *name;
	char *target;         /* a plan's target, or NULL for this machine */
	char *own_name;       /* a target check's name (owned) */
	enum check_status status;
	int essential;
	char *detail;         /* one line */
	char *fix;            /* how to fix, or NULL */
	/* llama-bench / llama-quantize extras */
	char *path, *where, *binary, *sha256, *build;
	struct buf devices;   /* one device per line */
	int have_devices;
	int schema;           /* store: schema version, or -1 */
};

#if defined(__APPLE__)
#define FIX(deb, brew) xstrdup("brew install " brew)
#else
#define FIX(deb, brew) xstrdup("apt-get install " deb)
#endif

static struct check *
add_check(struct check **v, size_t *n, const char *name, int essential)
{
	struct check *c;

	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	c = &(*v)[(*n)++];
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->essential = essential;
	c->status = CHECK_OK;
	c->schema = -1;
	buf_init(&c->devices, 0);
	return c;
}

static void
check_free(struct check *c)
{
	free(c->detail);
	free(c->fix);
	free(c->target);
	free(c->own_name);
	free(c->path);
	free(c->where);
	free(c->binary);
	free(c->sha256);
	free(c->build);
	buf_release(&c->devices);
}

/*
 * Runs argv with a timeout, capturing both streams into one buffer
 * (stdout, then stderr). Returns the exit status, or -1 when it could not
 * run or did not finish.
 */
static int
capture(const char *const *argv, double timeout, struct buf *out)
{
	struct proc p = PROC_INIT;
	int ret = -1;

	p.argv = argv;
	p.timeout = timeout;
	p.grace = 2;
	p.mem_cap = 1 << 20;
	error_silent++;
	if (proc_run(&p) == 0 && !p.timed_out && !p.interrupted)
		ret = p.status;
	error_silent--;
	buf_add(out, p.out.buf, p.out.len);
	buf_add(out, p.err.buf, p.err.len);
	proc_release(&p);
	return ret;
}

/* The first line of text containing needle, trimmed; NULL if none. */
static char *
line_with(const char *text, const char *needle)
{
	const char *hit = strstr(text, needle), *start, *end;

	if (!hit)
		return NULL;
	for (start = hit; start > text && start[-1] != '\n'; start--)
		;
	end = strchr(hit, '\n');
	if (!end)
		end = hit + strlen(hit);
	while (start < end && (*start == ' ' || *start == '\t'))
		start++;
	while (end > start && (end[-1] == ' ' || end[-1] == '\r'))
		end--;
	return xstrndup(start, (size_t)(end - start));
}

/*
 * Fills devices with the lines under "Available devices:" of llama-bench
 * --list-devices, one per line, without "(none)".
 */
static void
parse_devices(const char *out, struct buf *devices)
{
	const char *p = strstr(out, "Available devices:");

	if (!p)
		return;
	p = strchr(p, '\n');
	while (p && *++p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == 0 || (*p != ' ' && *p != '\t'))
			break;
		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		if (len && strncmp(p, "(none)", 6)) {
			buf_add(devices, p, len);
			buf_addch(devices, '\n');
		}
		p = end;
	}
}

static void
check_llama_tool(struct check *c, const char *name, const char *explicit,
		 int full)
{
	struct tool t = TOOL_INIT;
	struct buf out = BUF_INIT;
	char hex[SHA256_HEX_LEN + 1];
	char *env_name = tool_env_name(name);
	const char *env = getenv(env_name);

	error_silent++;
	if (tool_find(name, explicit, &t) < 0) {
		error_silent--;
		c->detail = xstrdup(error_last());
		if (explicit) {
			c->status = CHECK_ERROR;
			c->fix = xstrfmt("pass the path of an executable %s", name);
		} else if (env && *env) {
			c->status = CHECK_ERROR;
			c->fix = xstrfmt("unset %s or point it at an executable %s",
					 env_name, name);
		} else {
			c->status = CHECK_MISSING;
#if defined(__APPLE__)
			c->fix = xstrdup("brew install llama.cpp");
#else
			c->fix = xstrdup("make llama-bench");
#endif
		}
		free(env_name);
		return;
	}
	error_silent--;
	free(env_name);
	c->path = xstrdup(t.path);
	c->where = xstrdup(t.where);
	c->binary = xstrdup(t.binary);
	if (tool_binary_sha256(&t, hex) == 0)
		c->sha256 = xstrdup(hex);

	if (full) {
		const char *version[] = { t.path, "--version", NULL };
		const char *list[] = { t.path, "--list-devices", NULL };
		int rc;

		rc = capture(version, 30, &out);
		c->build = line_with(out.buf, "version:");
		if (c->build) {
			const char *v = c->build + strlen("version:");
			char *tmp = xstrdup(v + strspn(v, " "));

			free(c->build);
			c->build = tmp;
		}
		buf_reset(&out);
		rc = capture(list, 60, &out);
		if (rc != 0) {
			c->status = CHECK_ERROR;
			if (rc < 0)
				c->detail = xstrfmt("%s (%s) does not run: "
						    "--list-devices did not finish",
						    t.path, t.where);
			else
				c->detail = xstrfmt("%s (%s) does not run: "
						    "--list-devices exited %d",
						    t.path, t.where, rc);
			c->fix = xstrdup("make llama-bench, or point $LLAMA_BENCH "
					 "at a working llama-bench");
			goto cleanup;
		}
		c->have_devices = 1;
		parse_devices(out.buf, &c->devices);
	}
	{
		struct buf d = BUF_INIT;

		buf_addf(&d, "%s (%s)", t.path, t.where);
		if (c->sha256)
			buf_addf(&d, " sha256 %.12s", c->sha256);
		if (c->build)
			buf_addf(&d, ", %s", c->build);
		if (c->have_devices) {
			if (c->devices.len) {
				char *dev = xstrdup(c->devices.buf), *nl;

				for (nl = dev; (nl = strchr(nl, '\n')); nl++)
					*nl = nl[1] ? ';' : '\0';
				buf_addf(&d, ", devices: %s", dev);
				free(dev);
			} else {
				buf_adds(&d, ", devices: CPU only");
			}
		}
		c->detail = buf_detach(&d, NULL);
	}
cleanup:
	buf_release(&out);
	tool_release(&t);
}

static void
check_program(struct check *c, const char *name, const char *version_arg,
	      const char *version_needle, char *fix)
{
	char *path = path_find(name);
	struct buf out = BUF_INIT;
	char *version = NULL;

	if (!path) {
		c->status = CHECK_MISSING;
		c->detail = xstrfmt("'%s' not on PATH", name);
		c->fix = fix;
		return;
	}
	free(fix);
	if (version_arg) {
		const char *argv[] = { path, version_arg, NULL };

		capture(argv, 10, &out);
		version = line_with(out.buf, version_needle);
	}
	c->path = path;
	c->detail = version ? xstrfmt("%s (%s)", path, version) : xstrdup(path);
	free(version);
	buf_release(&out);
}

static void
check_chromium(struct check *c)
{
	static const char *const names[] = {
		"chromium", "chromium-browser", "google-chrome",
		"google-chrome-stable",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		char *path = path_find(names[i]);

		if (path) {
			c->path = path;
			c->detail = xstrdup(path);
			return;
		}
	}
#if defined(__APPLE__)
	{
		static const char *const apps[] = {
			"/Applications/Chromium.app/Contents/MacOS/Chromium",
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
		};

		for (i = 0; i < ARRAY_SIZE(apps); i++)
			if (file_exists(apps[i])) {
				c->path = xstrdup(apps[i]);
				c->detail = xstrdup(apps[i]);
				return;
			}
	}
#endif
	c->status = CHECK_MISSING;
	c->detail = xstrdup("no chromium or google-chrome on PATH (optional: "
			    "the tests render the HTML report with it)");
	c->fix = FIX("chromium", "--cask chromium");
}

static void
check_store(struct check *c, const char *path)
{
	struct store *s = NULL;
	char *dir, *slash;

	c->path = xstrdup(path);
	if (access(path, F_OK) < 0) {
		/* Do not create it: only say whether it could be created. */
		dir = xstrdup(path);
		slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = '\0';
		else
			strcpy(dir, ".");
		if (dir_exists(dir) && access(dir, W_OK | X_OK) == 0) {
			c->detail = xstrfmt("'%s' does not exist yet; run or "
					    "import creates it", path);
		} else {
			c->status = CHECK_ERROR;
			c->detail = xstrfmt("'%s' cannot be created: directory "
					    "'%s' is not writable", path, dir);
			c->fix = xstrdup("pass --db PATH in a writable directory");
		}
		free(dir);
		return;
	}
	error_silent++;
	if (store_open(&s, path) < 0) {
		error_silent--;
		c->status = CHECK_ERROR;
		c->detail = xstrdup(error_last());
		c->fix = xstrdup("pass --db PATH to another file, or move the "
				 "damaged one away");
		return;
	}
	error_silent--;
	c->schema = store_schema_version(s);
	c->detail = xstrfmt("%s (schema version %d)", path, c->schema);
	store_close(s);
}

/* The checks as one JSON object: {"ok": …, "checks": [{…}, …]}. */
static void
print_json(const struct check *v, size_t n, int ok)
{
	struct buf b = BUF_INIT;
	struct jw w;
	size_t i;

	jw_init(&w, &b, 1);
	jw_object(&w);
	jw_kbool(&w, "ok", ok);
	jw_key(&w, "checks");
	jw_array(&w);
	for (i = 0; i < n; i++) {
		const struct check *c = &v[i];
		const struct {
			const char *key, *value;
		} field[] = {
			{ "detail", c->detail }, { "fix", c->fix },
			{ "path", c->path }, { "where", c->where },
			{ "binary", c->binary }, { "sha256", c->sha256 },
			{ "version", c->build },
		};
		size_t k;

		jw_object(&w);
		jw_kstr(&w, "name", c->name);
		if (c->target)
			jw_kstr(&w, "target", c->target);
		jw_kstr(&w, "status", check_status_name(c->status));
		jw_kbool(&w, "essential", c->essential);
		for (k = 0; k < ARRAY_SIZE(field); k++)
			if (field[k].value)
				jw_kstr(&w, field[k].key, field[k].value);
		if (c->have_devices) {
			const char *p = c->devices.buf, *nl;

			jw_key(&w, "devices");
			jw_array(&w);
			for (; (nl = strchr(p, '\n')); p = nl + 1)
				jw_strn(&w, p, (size_t)(nl - p));
			jw_end(&w);
		}
		if (c->schema >= 0)
			jw_kint(&w, "schema_version", c->schema);
		jw_end(&w);
	}
	jw_end(&w);
	jw_end(&w);
	buf_addch(&b, '\n');
	fputs(b.buf, stdout);
	buf_release(&b);
}

/*
 * The checks of every target of the plan at path, appended to v. 0, or
 * -1 after error() when the plan does not load.
 */
static int
check_plan(const char *path, const char *models_dir, struct check **v,
	   size_t *n)
{
	struct plan p;
	size_t t, i;

	if (plan_load(path, models_dir, &p) < 0)
		return -1;
	for (t = 0; t < p.ntargets; t++) {
		struct target_check *tc = NULL;
		size_t ntc = 0;

		target_doctor(&p, &p.targets[t], &tc, &ntc);
		for (i = 0; i < ntc; i++) {
			struct check *c = add_check(v, n, NULL, 1);

			c->own_name = tc[i].name;
			c->name = c->own_name;
			c->target = xstrdup(p.targets[t].name);
			c->status = tc[i].status;
			c->detail = tc[i].detail;
			c->fix = tc[i].fix;
			tc[i].name = tc[i].detail = tc[i].fix = NULL;
		}
		target_checks_free(tc, ntc);
	}
	plan_free(&p);
	return 0;
}

static int
doctor_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct doctor_opts o = { 0 };
	const char **args = NULL;
	const char *plan = NULL;
	size_t nargs;
	struct check *v = NULL, *c;
	size_t n = 0, i;
	int ok = 1, rc, mismatch = 0, plan_ok = 1;

	rc = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	plan = nargs ? args[0] : NULL;
	free(args);

	check_llama_tool(add_check(&v, &n, "llama-bench", 1), "llama-bench",
			 o.llama_bench, 1);
	check_llama_tool(add_check(&v, &n, "llama-quantize", 0),
			 "llama-quantize", NULL, 0);
	check_program(add_check(&v, &n, "gnuplot", 0), "gnuplot", "--version",
		      "gnuplot", FIX("gnuplot-nox", "gnuplot"));

	c = add_check(&v, &n, "sqlite", 0);
	c->detail = xstrfmt("SQLite %s", store_sqlite_version());
	c->build = xstrdup(store_sqlite_version());
	c = add_check(&v, &n, "cjson", 0);
	c->detail = xstrfmt("cJSON %s", json_backend_version());
	c->build = xstrdup(json_backend_version());
	c = add_check(&v, &n, "crypto", 0);
	c->detail = xstrdup(hash_backend_version());
	c->build = xstrdup(hash_backend_version());

	check_program(add_check(&v, &n, "ssh", 0), "ssh", "-V", "SSH",
		      FIX("openssh-client", "openssh"));
	check_chromium(add_check(&v, &n, "chromium", 0));
	check_store(add_check(&v, &n, "store", 1), ctx->db_path);
	if (plan && check_plan(plan, o.models_dir, &v, &n) < 0) {
		for (i = 0; i < n; i++)
			check_free(&v[i]);
		free(v);
		return EXIT_USAGE;
	}

	for (i = 0; i < n; i++) {
		int bad = v[i].essential && v[i].status != CHECK_OK &&
			v[i].status != CHECK_WARNING;

		if (bad && v[i].status == CHECK_MISMATCH)
			mismatch = 1;
		else if (bad)
			ok = 0;
		if (bad && v[i].target)
			plan_ok = 0;
	}
	if (o.json) {
		print_json(v, n, ok && !mismatch);
	} else {
		for (i = 0; i < n; i++) {
			char *name;

			c = &v[i];
			name = c->target ? xstrfmt("%s/%s", c->target, c->name) :
				xstrdup(c->name);
			printf("%-8s %-15s %s", check_status_name(c->status), name,
			       c->detail ? c->detail : "");
			if (c->fix)
				printf("; fix: %s", c->fix);
			putchar('\n');
			free(name);
		}
		if (!ctx->quiet)
			printf("%s\n", ok && !mismatch ? "essentials ok" :
			       !plan ? "essentials missing: llama-bench and the "
			       "store must be usable" : plan_ok ?
			       "essentials missing: llama-bench and the store "
			       "must be usable" : "not ready: fix the targets' "
			       "lines above");
		if (!ctx->quiet && plan && ok && !mismatch)
			printf("plan %s: every target ready\n", plan);
	}
	for (i = 0; i < n; i++)
		check_free(&v[i]);
	free(v);
	return !ok ? EXIT_ENV : mismatch ? EXIT_CHECK : EXIT_OK;
}
