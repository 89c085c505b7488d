#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "models/hash.h"
#include "run/launchagent.h"
#include "run/plan.h"
#include "run/shimlib.h"
#include "run/target.h"
#include "base/files.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every whole number up to 2^53 - 1 is exact in the double of a range. */
#define MAX_EXACT 9007199254740991.0

struct la_opts {
	const char *label, *program, *library, *stdout_path, *stderr_path;
	const char *output;
	long family_max, threadgroup, working_set;
	int allow_arm64_only;
};

#define LO struct la_opts
static const struct opt la_opts[] = {
	OPT_S("label", 0, LO, label, "LABEL",
	      "launchd label: letters, digits, . - _"),
	OPT_S("program", 0, LO, program, "PATH",
	      "absolute path of the workload"),
	OPT_S("library", 0, LO, library, "DYLIB",
	      "absolute path of the shim dylib: the universal "
	      "LumeMetalCapabilities.dylib (arm64 and arm64e)"),
	OPT_I("family-max", 0, LO, family_max, "N", 1001, 1999,
	      "highest Apple GPU family, 1001-1999"),
	OPT_I("threadgroup-memory", 0, LO, threadgroup, "N", 1, MAX_EXACT,
	      "a limit in bytes, e.g. 32768: the shim only lowers the "
	      "device's answer (default: the device's own)"),
	OPT_I("working-set", 0, LO, working_set, "N", 0, MAX_EXACT,
	      "recommendedMaxWorkingSetSize in bytes"),
	OPT_S("stdout", 0, LO, stdout_path, "PATH",
	      "log file (default /tmp/LABEL.stdout.log)"),
	OPT_S("stderr", 0, LO, stderr_path, "PATH",
	      "log file (default /tmp/LABEL.stderr.log)"),
	OPT_F("allow-arm64-only", 0, LO, allow_arm64_only,
	      "accept a DYLIB without an arm64e slice (no process of the job "
	      "is arm64e)"),
	OPT_S("output", 'o', LO, output, "FILE",
	      "write the plist to FILE (usually "
	      "~/Library/LaunchAgents/LABEL.plist) and the commands to stdout; "
	      "without -o the plist goes to stdout, the commands to stderr"),
	OPT_END
};

static int launchagent(int argc, char **argv, struct cmd_ctx *ctx);

static const struct command cmd_shim_launchagent = {
	.name = "shim launchagent",
	.fn = launchagent,
	.summary = "a LaunchAgent plist for one server with the shim injected",
	.synopsis = "--label LABEL --program PATH\n"
		"           --library DYLIB --family-max N [--threadgroup-memory N]\n"
		"           [--working-set N] [--stdout PATH] [--stderr PATH]\n"
		"           [-o FILE] [-- ARGS...]",
	.description =
		"Writes a per-workload LaunchAgent property list that starts PATH\n"
		"with ARGS (one ProgramArguments string each) and the Metal\n"
		"capability shim injected through its own EnvironmentVariables:\n"
		"DYLD_INSERT_LIBRARIES=DYLIB and LUME_METAL_APPLE_FAMILY_MAX=N\n"
		"(plus LUME_METAL_MAX_THREADGROUP_MEMORY and\n"
		"LUME_METAL_RECOMMENDED_WORKING_SET_SIZE when given). No RunAtLoad\n"
		"or KeepAlive. Then prints the plutil -lint, launchctl bootstrap,\n"
		"kickstart and rollback (bootout, remove the plist) commands.\n"
		"Never use `launchctl setenv` for the shim: it reaches every job.\n"
		"\n"
		"When DYLIB is a file here, it must be a Mach-O dylib with an arm64e\n"
		"slice (the universal one): the job's arm64e children inherit the\n"
		"variable and dyld terminates them on an arm64-only dylib.\n"
		"\n"
		"--label, --program, --library and --family-max are required; the\n"
		"program's own arguments go after --.\n",
	.opts = la_opts,
	.epilogue = "See shim/README.md for building, verifying and rolling back.\n",
	.max_args = -1,
};

struct pin_opts {
	const char *library, *models_dir, *probe;
};

#define PO struct pin_opts
static const struct opt pin_opts[] = {
	OPT_S("library", 0, PO, library, "PATH",
	      "the path the library has on the target (sets inject.library)"),
	OPT_S("models-dir", 0, PO, models_dir, "DIR",
	      "where manifest models live, to check the rewritten plan "
	      "(default models)"),
	OPT_END
};
static const struct opt install_opts[] = {
	OPT_S("library", 0, PO, library, "PATH",
	      "install to PATH on the target and pin that path (default: the "
	      "variant's inject.library)"),
	OPT_S("probe", 0, PO, probe, "FILE",
	      "also install FILE (make shim's metal-capabilities) where the "
	      "variant's probe runs"),
	OPT_S("models-dir", 0, PO, models_dir, "DIR",
	      "where manifest models live (default models)"),
	OPT_END
};
#undef PO

static int shim_pin(int argc, char **argv, struct cmd_ctx *ctx);
static int shim_install(int argc, char **argv, struct cmd_ctx *ctx);

static const struct command cmd_shim_pin = {
	.name = "shim pin",
	.fn = shim_pin,
	.summary = "pin a variant's injected library to a dylib's SHA-256",
	.synopsis = "[--library PATH] [--models-dir DIR] PLAN VARIANT DYLIB",
	.description =
		"Sets inject.sha256 of VARIANT in PLAN to the SHA-256 of DYLIB (the\n"
		"file `make shim` wrote: build/shim/LumeMetalCapabilities.dylib, the\n"
		"universal one) and, with --library, inject.library to the path it\n"
		"has on the target. DYLIB must be a Mach-O dylib with an arm64 or\n"
		"arm64e slice or an ELF shared object (LD_PRELOAD); an arm64-only\n"
		"dylib is pinned with a warning (arm64e processes cannot load it).\n"
		"PLAN is rewritten through the JSON module: every other key and\n"
		"value is kept, and the result must load as a plan before it\n"
		"replaces the file. `run` refuses a library whose hash\n"
		"differs from the pin, so pin what you install.\n",
	.opts = pin_opts,
	.epilogue = "Exit: 0 pinned; 2 bad plan, variant or arguments; 3 DYLIB "
		"unreadable or\nthe plan not writable.\n",
	.min_args = 3,
	.max_args = 3,
};

static const struct command cmd_shim_install = {
	.name = "shim install",
	.fn = shim_install,
	.summary = "copy the shim to a variant's target, check it there, pin it",
	.synopsis = "[--library PATH] [--probe FILE] [--models-dir DIR]\n"
		"                          PLAN VARIANT DYLIB",
	.description =
		"Installs DYLIB (checked as by `shim pin`) where VARIANT injects\n"
		"it (inject.library, or --library) on the variant's target: a copy\n"
		"for a local target, scp for ssh, lume and tart targets (to the\n"
		"host, to the guest address\n"
		"from `lume get` or `tart ip`, as the target's user with its\n"
		"ssh_options) into PATH.part, then a move into place over the\n"
		"target's transport. The SHA-256 is read back on the target and must\n"
		"equal DYLIB's; then the plan is pinned as by `shim pin`. --probe\n"
		"installs the capability probe the same way, executable, at the\n"
		"path the variant's probe runs.\n",
	.opts = install_opts,
	.epilogue = "Exit: 0 installed, verified and pinned; 2 bad plan, variant "
		"or arguments;\n3 the copy or the check on the target failed.\n",
	.min_args = 3,
	.max_args = 3,
};

static const struct command *const shim_subs[] = {
	&cmd_shim_install,
	&cmd_shim_pin,
	&cmd_shim_launchagent,
	NULL,
};

const struct command cmd_shim = {
	.name = "shim",
	.fn = cmd_dispatch,
	.summary = "install and pin the capability shim; a LaunchAgent for a server",
	.description =
		"The Metal capability shim itself is built by `make shim`; `shim\n"
		"install` puts it on a plan's target and pins its SHA-256 in the\n"
		"plan, `shim pin` only pins; see shim/README.md.\n",
	.max_args = -1,
	.subs = shim_subs,
};

/*
 * The index of the "--" that ends the options, as opt_parse() reads
 * them: the first "--" that is not the value of the option before it;
 * argc when there is none. Everything after it is the program's.
 */
static int
end_of_options(const struct opt *opts, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct opt *o;

		if (!strcmp(a, "--"))
			return i;
		if (a[0] != '-' || !a[1] || strchr(a, '='))
			continue;
		for (o = opts; o->name; o++)
			if (a[1] == '-' ? !strcmp(a + 2, o->name) :
			    (!a[2] && a[1] == o->short_name))
				break;
		if (o->name && o->type != OPT_FLAG)
			i++;   /* its value, even when it is "--" */
	}
	return argc;
}

static int
launchagent(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct la_opts o = { .threadgroup = -1, .working_set = -1 };
	struct launchagent la = { 0 };
	struct buf plist = BUF_INIT, cmds = BUF_INIT;
	char family[32], threadgroup[32], working_set[32];
	const char **args = NULL;
	char *what = NULL;
	size_t nargs;
	int dd, checked = 0, ret = EXIT_OK;

	/* Only what comes before "--" is parsed: nothing after it, not even
	 * --help, is an option of ours. */
	dd = end_of_options(ctx->cmd->opts, argc, argv);
	ret = cmd_parse(ctx, dd, argv, &o, &args, &nargs);
	if (ret)
		return ret < 0 ? EXIT_USAGE : EXIT_OK;
	if (nargs) {
		ret = cmd_usage_error(ctx, "unexpected argument '%s' (program "
				      "arguments go after --)", args[0]);
		free(args);
		return ret;
	}
	free(args);
	if (!o.label || !o.program || !o.library || !o.family_max)
		return cmd_usage_error(ctx, "--label, --program, --library "
				       "and --family-max are required");
	/* The library takes the numbers as text; the parser checked them. */
	snprintf(family, sizeof(family), "%ld", o.family_max);
	la.family_max = family;
	if (o.threadgroup >= 0) {
		snprintf(threadgroup, sizeof(threadgroup), "%ld", o.threadgroup);
		la.threadgroup = threadgroup;
	}
	if (o.working_set >= 0) {
		snprintf(working_set, sizeof(working_set), "%ld", o.working_set);
		la.working_set = working_set;
	}
	la.label = o.label;
	la.program = o.program;
	la.library = o.library;
	la.stdout_path = o.stdout_path;
	la.stderr_path = o.stderr_path;
	la.args = dd < argc ? argv + dd + 1 : argv + argc;
	la.nargs = dd < argc ? (size_t)(argc - dd - 1) : 0;
	la.allow_arm64_only = o.allow_arm64_only;

	if (launchagent_validate(&la) < 0 ||
	    (checked = launchagent_check_library(&la, &what)) < 0 ||
	    launchagent_plist(&plist, &la) < 0) {
		ret = EXIT_USAGE;
		goto cleanup;
	}
	if (checked)
		fprintf(stderr, "library: %s: %s\n", la.library, what);
	else
		fprintf(stderr, "note: '%s' is not on this machine, so its "
			"slices were not checked; inject the universal "
			"LumeMetalCapabilities.dylib (arm64 and arm64e)\n",
			la.library);
	launchagent_commands(&cmds, &la, o.output);
	if (o.output) {
		if (write_file_atomic(o.output, plist.buf, plist.len) < 0) {
			ret = EXIT_ENV;
			goto cleanup;
		}
		fputs(cmds.buf, stdout);
	} else {
		fputs(plist.buf, stdout);
		fputs(cmds.buf, stderr);
	}
	if (fflush(stdout) != 0) {
		error("cannot write to stdout");
		ret = EXIT_ENV;
	}
cleanup:
	free(what);
	buf_release(&plist);
	buf_release(&cmds);
	return ret;
}

/*
 * Says what the library at path is; an exit code: EXIT_USAGE when it is
 * no library at all or a Mach-O file no arm64 process can load, a
 * warning (and EXIT_OK) for an arm64-only dylib.
 */
static int
describe_library(const char *path)
{
	struct shimlib_info info;
	struct buf b = BUF_INIT;

	if (shimlib_inspect(path, &info) < 0)
		return EXIT_USAGE;
	if (info.format == SHIMLIB_MACHO &&
	    shimlib_check_macos(path, &info) < 0)
		return EXIT_USAGE;
	shimlib_describe(&b, &info);
	printf("library: %s: %s\n", path, b.buf);
	buf_release(&b);
	if (info.format == SHIMLIB_MACHO && !info.has_arm64e)
		warning("'%s': " SHIMLIB_NO_ARM64E_WARNING, path);
	return EXIT_OK;
}

/* Pins the plan and says what changed; an exit code. */
static int
pin(const char *plan, const char *variant, const char *library,
    const char *models_dir, const char *hex, const char *what)
{
	char *old = NULL;

	if (plan_pin_inject(plan, variant, library, hex, models_dir, &old) < 0)
		return EXIT_USAGE;
	if (old && !strcmp(old, hex))
		printf("pinned: variant '%s' of %s already pins %s (%s)\n",
		       variant, plan, hex, what);
	else
		printf("pinned: variant '%s' of %s: sha256 %s -> %s (%s)\n",
		       variant, plan, old ? old : "(none)", hex, what);
	free(old);
	return EXIT_OK;
}

static int
shim_pin(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pin_opts o = { 0 };
	const char **args = NULL;
	char hex[SHA256_HEX_LEN + 1];
	size_t nargs;
	int ret;

	ret = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (ret)
		return ret < 0 ? EXIT_USAGE : EXIT_OK;
	if (hash_file_sha256(args[2], hex) < 0)
		ret = EXIT_ENV;
	else if ((ret = describe_library(args[2])) == EXIT_OK)
		ret = pin(args[0], args[1], o.library, o.models_dir, hex, args[2]);
	free(args);
	return ret;
}

static int
shim_install(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct pin_opts o = { 0 };
	const char **args = NULL;
	char hex[SHA256_HEX_LEN + 1], phex[SHA256_HEX_LEN + 1];
	const struct plan_variant *v = NULL;
	const struct plan_target *t;
	const char *dst;
	struct plan p;
	size_t nargs, i;
	int ret;

	ret = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (ret)
		return ret < 0 ? EXIT_USAGE : EXIT_OK;
	if (plan_load(args[0], o.models_dir, &p) < 0) {
		free(args);
		return EXIT_USAGE;
	}
	for (i = 0; i < p.nvariants; i++)
		if (!strcmp(p.variants[i].name, args[1]))
			v = &p.variants[i];
	dst = o.library ? o.library : v ? v->inject_lib : NULL;
	if (!v) {
		ret = cmd_usage_error(ctx, "plan '%s' has no variant '%s'",
				      args[0], args[1]);
		goto cleanup;
	}
	if (!dst) {
		ret = cmd_usage_error(ctx, "variant '%s' injects no library; "
				      "give --library PATH (its path on the "
				      "target)", v->name);
		goto cleanup;
	}
	if (o.probe && !v->probe_argv) {
		ret = cmd_usage_error(ctx, "variant '%s' has no probe to install "
				      "--probe for", v->name);
		goto cleanup;
	}
	t = plan_target(&p, v->target);
	ret = EXIT_ENV;
	if (hash_file_sha256(args[2], hex) < 0 ||
	    (o.probe && hash_file_sha256(o.probe, phex) < 0))
		goto cleanup;
	if ((ret = describe_library(args[2])) != EXIT_OK)
		goto cleanup;
	ret = EXIT_ENV;
	if (target_install_file(t, args[2], dst, 0, hex) < 0)
		goto cleanup;
	printf("installed: %s -> target '%s' (%s) %s, SHA-256 %s checked there\n",
	       args[2], t->name, t->transport, dst, hex);
	if (o.probe) {
		if (target_install_file(t, o.probe, v->probe_argv[0], 1, phex) < 0)
			goto cleanup;
		printf("installed: %s -> target '%s' (%s) %s, SHA-256 %s checked "
		       "there\n", o.probe, t->name, t->transport,
		       v->probe_argv[0], phex);
	}
	ret = pin(args[0], args[1], o.library, o.models_dir, hex, args[2]);
cleanup:
	plan_free(&p);
	free(args);
	return ret;
}
