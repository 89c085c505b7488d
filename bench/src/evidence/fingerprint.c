#define _POSIX_C_SOURCE 200809L
#include "evidence/fingerprint.h"
#include "models/hash.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The stable keys: facts that change only when the setup changes. */
static const char *const identity_keys[] = {
	"hw_model", "cpu_model", "cpu_cores", "memory_bytes", "is_vm",
	"gpu", "gpu_cores", "os_name", "os_version", "os_build",
	"llama_build", "llama_bench_sha256", "shim_sha256",
	"pvg_unrestricted",
};

/* ---- the struct ---------------------------------------------------------------- */

static void refresh(struct fingerprint *fp);

static void
fact_clear(struct fp_fact *f)
{
	free(f->key);
	free(f->str);
	json_free(f->json);
	memset(f, 0, sizeof(*f));
}

void
fingerprint_release(struct fingerprint *fp)
{
	size_t i;

	for (i = 0; i < fp->nfacts; i++)
		fact_clear(&fp->facts[i]);
	free(fp->facts);
	memset(fp, 0, sizeof(*fp));
}

void
fingerprint_copy(struct fingerprint *dst, const struct fingerprint *src)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	dst->facts = xcalloc(src->nfacts ? src->nfacts : 1, sizeof(*dst->facts));
	for (i = 0; i < src->nfacts; i++) {
		const struct fp_fact *f = &src->facts[i];
		struct fp_fact *d = &dst->facts[i];

		*d = *f;
		d->key = xstrdup(f->key);
		d->str = f->str ? xstrdup(f->str) : NULL;
		d->json = f->json ? json_dup(f->json) : NULL;
	}
	dst->nfacts = src->nfacts;
	refresh(dst);
}

/* The fact of key, or NULL. */
static const struct fp_fact *
fingerprint_get(const struct fingerprint *fp, const char *key)
{
	size_t i;

	for (i = 0; i < fp->nfacts; i++)
		if (!strcmp(fp->facts[i].key, key))
			return &fp->facts[i];
	return NULL;
}

/* 1 for the values a person writes for "yes" (provenance's reading). */
static int
fact_true(const struct fp_fact *f)
{
	if (!f)
		return -1;
	switch (f->type) {
	case FP_NUM:
		return f->num == 1;
	case FP_BOOL:
		return f->b;
	case FP_STR:
		return !strcmp(f->str, "1") || !strcmp(f->str, "true") ||
			!strcmp(f->str, "yes");
	default:
		return 0;
	}
}

/* The typed members: re-pointed after every change of the facts. */
static void
refresh(struct fingerprint *fp)
{
	static const struct {
		const char *key;
		size_t offset;
	} members[] = {
#define M(k) { #k, offsetof(struct fingerprint, k) }
		M(os_name), M(os_version), M(os_build), M(os_pretty),
		M(kernel), M(arch), M(hw_model), M(cpu_model), M(cpu_cores),
		M(memory_bytes), { "is_vm", offsetof(struct fingerprint,
						       is_vm_fact) },
		M(gpu), M(gpu_cores), M(sip), M(thermal), M(cpu_governor),
		M(load1), M(pvg_unrestricted), M(llama_build),
		M(llama_bench_path), M(llama_bench_sha256), M(shim_sha256),
		M(mlx_lm_path), M(vm_image), M(lume_version), M(tart_version),
#undef M
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(members); i++)
		*(const struct fp_fact **)(void *)((char *)fp +
						   members[i].offset) =
			fingerprint_get(fp, members[i].key);
	fp->os = !fp->os_name || fp->os_name->type != FP_STR ||
		!*fp->os_name->str ? FP_OS_UNKNOWN :
		!strcmp(fp->os_name->str, "macOS") ? FP_OS_MACOS : FP_OS_OTHER;
	fp->is_vm = fact_true(fp->is_vm_fact);
}

/* Appends a fact for key (value copied from v). */
static void
add_fact(struct fingerprint *fp, const char *key, const struct json *v)
{
	struct fp_fact *f;

	fp->facts = xrealloc(fp->facts, (fp->nfacts + 1) * sizeof(*f));
	f = &fp->facts[fp->nfacts++];
	memset(f, 0, sizeof(*f));
	f->key = xstrdup(key);
	switch (json_type(v)) {
	case JSON_STRING:
		f->type = FP_STR;
		f->str = xstrdup(json_str(v));
		break;
	case JSON_NUMBER:
		f->type = FP_NUM;
		f->num = json_num(v);
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		f->type = FP_BOOL;
		f->b = json_type(v) == JSON_TRUE;
		break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		f->type = FP_JSON;
		f->json = json_dup(v);
		break;
	default:
		f->type = FP_NULL;
		break;
	}
}

int
fingerprint_from_json(struct fingerprint *fp, const struct json *obj,
		      const char *what)
{
	const struct json *m;

	memset(fp, 0, sizeof(*fp));
	if (json_type(obj) != JSON_OBJECT)
		return error("%s is not a JSON object",
			     what ? what : "fingerprint");
	JSON_FOR_EACH(m, obj)
		add_fact(fp, json_key(m), m);
	refresh(fp);
	return 0;
}

int
fingerprint_from_text(struct fingerprint *fp, const char *text,
		      const char *what)
{
	struct json *root;
	size_t end;
	int ret;

	memset(fp, 0, sizeof(*fp));
	if (!text)
		text = "{}";
	/* the value at the start of the text, as stored */
	root = json_parse_prefix(text, strlen(text), &end);
	ret = fingerprint_from_json(fp, root, what);
	json_free(root);
	return ret;
}

static void
write_value(struct jw *w, const struct fp_fact *f)
{
	switch (f->type) {
	case FP_STR:
		jw_str(w, f->str);
		break;
	case FP_NUM:
		jw_num(w, f->num);
		break;
	case FP_BOOL:
		jw_bool(w, f->b);
		break;
	case FP_JSON:
		jw_value(w, f->json);
		break;
	default:
		jw_null(w);
		break;
	}
}

char *
fingerprint_json(const struct fingerprint *fp)
{
	struct buf b = BUF_INIT;
	struct jw w;
	size_t i;

	jw_init(&w, &b, 0);
	jw_object(&w);
	for (i = 0; i < fp->nfacts; i++) {
		jw_key(&w, fp->facts[i].key);
		write_value(&w, &fp->facts[i]);
	}
	jw_end(&w);
	return buf_detach(&b, NULL);
}

void
fingerprint_set(struct fingerprint *fp, const char *key, const char *value)
{
	struct json *v = json_new_str(value);
	size_t i;

	for (i = 0; i < fp->nfacts; i++)
		if (!strcmp(fp->facts[i].key, key)) {
			fact_clear(&fp->facts[i]);
			memmove(&fp->facts[i], &fp->facts[i + 1],
				(fp->nfacts - i - 1) * sizeof(fp->facts[0]));
			fp->nfacts--;
			break;
		}
	add_fact(fp, key, v);
	json_free(v);
	refresh(fp);
}

/* ---- identity ------------------------------------------------------------------- */

/* KEY=VALUE: a string as it is, another value as JSON, null as nothing. */
static void
add_key(struct buf *b, const struct fingerprint *fp, const char *key)
{
	const struct fp_fact *f = fingerprint_get(fp, key);

	buf_adds(b, key);
	buf_addch(b, '=');
	if (f && f->type == FP_STR) {
		buf_adds(b, f->str);
	} else if (f && f->type != FP_NULL) {
		struct jw w;

		jw_init(&w, b, 0);
		write_value(&w, f);
	}
	buf_addch(b, '\n');
}

void
fingerprint_identity(const struct fingerprint *fp, char identity[65],
		     char base_identity[65])
{
	struct buf all = BUF_INIT, base = BUF_INIT;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(identity_keys); i++) {
		add_key(&all, fp, identity_keys[i]);
		if (strcmp(identity_keys[i], "os_version") &&
		    strcmp(identity_keys[i], "os_build"))
			add_key(&base, fp, identity_keys[i]);
	}
	hash_buf_sha256(all.buf, all.len, identity);
	hash_buf_sha256(base.buf, base.len, base_identity);
	buf_release(&all);
	buf_release(&base);
}

/* ---- the probe ------------------------------------------------------------------- */

/*
 * Each line: source.key=value. Commands that are missing print nothing;
 * multi-line outputs are flattened to one line each.
 */
const char fingerprint_probe_script[] =
	"PATH=$PATH:/usr/sbin:/sbin:/usr/bin:/bin; export PATH\n"
	"have() { command -v \"$1\" >/dev/null 2>&1; }\n"
	/* Linux: the kernel's own files, read by builtins; else uname. */
	"if [ -r /proc/sys/kernel/ostype ] && [ -r /proc/sys/kernel/arch ]; then\n"
	"  read -r s < /proc/sys/kernel/ostype; read -r r < /proc/sys/kernel/osrelease; read -r m < /proc/sys/kernel/arch\n"
	"  set -- \"$s\" \"$r\" \"$m\"\n"
	"else set -- $(uname -s -r -m 2>/dev/null); fi\n"
	"echo \"os.uname_s=$1\"; echo \"os.uname_r=$2\"; echo \"os.uname_m=$3\"\n"
	"if [ \"$1\" = Darwin ]; then\n"
	"  echo \"sw_vers.productName=$(sw_vers -productName 2>/dev/null)\"\n"
	"  echo \"sw_vers.productVersion=$(sw_vers -productVersion 2>/dev/null)\"\n"
	"  echo \"sw_vers.buildVersion=$(sw_vers -buildVersion 2>/dev/null)\"\n"
	"  for k in hw.model machdep.cpu.brand_string hw.ncpu hw.memsize kern.hv_vmm_present hw.nperflevels; do\n"
	"    echo \"sysctl.$k=$(sysctl -n $k 2>/dev/null)\"\n"
	"  done\n"
	"  echo \"csrutil.status=$(csrutil status 2>/dev/null | head -n 1)\"\n"
	"  pmset -g therm 2>/dev/null | sed 's/^/pmset.therm=/'\n"
	"  sp=$(system_profiler SPDisplaysDataType -json 2>/dev/null)\n"
	"  echo \"sp.gpu_cores=$(printf '%s\\n' \"$sp\" | sed -n 's/.*\"sppci_cores\" *: *\"\\([0-9]*\\)\".*/\\1/p' | head -n 1)\"\n"
	"  echo \"sp.gpu_model=$(printf '%s\\n' \"$sp\" | sed -n 's/.*\"sppci_model\" *: *\"\\([^\"]*\\)\".*/\\1/p' | head -n 1)\"\n"
	"  echo \"pvg.unrestricted=$(defaults read com.apple.gpusw.ParavirtualizedGraphics ForceUnrestrictedDeviceFeatureLevel 2>/dev/null)\"\n"
	"  echo \"load.avg=$(sysctl -n vm.loadavg 2>/dev/null | tr -d '{}')\"\n"
	"  echo \"proc.llama=$(ps -A -o comm= 2>/dev/null | grep -c '^llama')\"\n"
	"else\n"
	/* Linux: shell builtins only, so the probe costs one process. */
	"  if [ -r /etc/os-release ]; then . /etc/os-release; echo \"linux.os_name=$NAME\"; echo \"linux.os_version=$VERSION_ID\"; echo \"linux.os_pretty=$PRETTY_NAME\"; fi\n"
	/* The first processor block is enough (a big host's cpuinfo is */
	/* megabytes); the count comes from the online CPU ranges. */
	"  model=; hv=0; fl=\n"
	"  while IFS=: read -r k v; do\n"
	"    case $k in\n"
	"    'model name'*) model=${v# } ;;\n"
	"    flags*) fl=1; case \" $v \" in *' hypervisor '*) hv=1 ;; esac ;;\n"
	"    '') [ -n \"$model$fl\" ] && break ;;\n"
	"    esac\n"
	"  done < /proc/cpuinfo\n"
	"  n=0; on=; [ -r /sys/devices/system/cpu/online ] && read -r on < /sys/devices/system/cpu/online\n"
	"  IFS=,; for r in $on; do case $r in *-*) n=$((n + ${r#*-} - ${r%-*} + 1)) ;; ?*) n=$((n + 1)) ;; esac; done; unset IFS\n"
	"  echo \"linux.cpu_model=$model\"; echo \"linux.cpu_cores=$n\"; echo \"linux.hypervisor=$hv\"\n"
	"  while read -r k v u; do [ \"$k\" = MemTotal: ] && { echo \"linux.mem_kb=$v\"; break; }; done < /proc/meminfo\n"
	"  v=; [ -r /sys/class/dmi/id/product_name ] && read -r v < /sys/class/dmi/id/product_name; echo \"linux.hw_model=$v\"\n"
	"  v=; [ -r /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor ] && read -r v < /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor; echo \"linux.governor=$v\"\n"
	"  read -r a b c rest < /proc/loadavg; echo \"load.avg=$a $b $c\"\n"
	"  n=0; for f in /proc/[0-9]*/comm; do read -r c < \"$f\" 2>/dev/null || continue; case $c in llama*) n=$((n + 1)) ;; esac; done\n"
	"  echo \"proc.llama=$n\"\n"
	"fi\n";

/*
 * The GPU of a Linux target: nvidia-smi's name and driver, else the
 * first Vulkan device. Run only when a plan's backend uses a GPU there
 * (vulkaninfo alone costs more than the rest of the probe), alone or
 * after the base probe; nothing on a Mac (system_profiler answers).
 */
const char fingerprint_gpu_probe_script[] =
	"if [ -r /proc/sys/kernel/ostype ] || [ \"$(uname -s 2>/dev/null)\" != Darwin ]; then\n"
	"  PATH=$PATH:/usr/sbin:/sbin:/usr/bin:/bin; export PATH\n"
	"  have() { command -v \"$1\" >/dev/null 2>&1; }\n"
	"  if have nvidia-smi; then nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu.nvidia=/'; fi\n"
	"  if have vulkaninfo; then vulkaninfo --summary 2>/dev/null | sed -n 's/^[[:space:]]*deviceName[[:space:]]*=[[:space:]]*/gpu.vulkan=/p'; fi\n"
	"fi\n";

static char *
value_of(const char *text, size_t len, const char *key)
{
	size_t klen = strlen(key), pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (end - pos > klen && !memcmp(text + pos, key, klen) &&
		    text[pos + klen] == '=') {
			const char *v = text + pos + klen + 1;
			size_t vl = end - pos - klen - 1;
			while (vl && (v[vl - 1] == '\r' || v[vl - 1] == ' '))
				vl--;
			return xstrndup(v, vl);
		}
		pos = end + 1;
	}
	return NULL;
}

struct warnings {
	char ***v;
	size_t *n;
};

static void
add_warning(struct warnings *w, char *msg)
{
	*w->v = strv_push(*w->v, w->n, msg);
}

static void
put(struct json *o, const char *key, char *v)
{
	if (v && *v)
		json_set_str(o, key, v);
	free(v);
}

static void
put_num(struct json *o, const char *key, char *v, double scale)
{
	double d;

	if (v && parse_double(v, &d) == 0)
		json_set_num(o, key, d * scale);
	free(v);
}

/* The GPU of a Linux probe's gpu.* lines: NVIDIA's, else Vulkan's. */
static char *
linux_gpu(const char *t, size_t len)
{
	char *v = value_of(t, len, "gpu.nvidia");

	if (!v)
		v = value_of(t, len, "gpu.vulkan");
	return v;
}

void
fingerprint_from_probe(struct fingerprint *fp, const char *t, size_t len,
		       char ***warnings, size_t *nwarnings)
{
	struct json *o = json_new_object();
	struct warnings ws = { warnings, nwarnings }, *w = &ws;
	char *sys = value_of(t, len, "os.uname_s"), *v;
	double cores = 0, load = -1;
	size_t pos = 0;

	put(o, "kernel", value_of(t, len, "os.uname_r"));
	put(o, "arch", value_of(t, len, "os.uname_m"));
	if (sys && !strcmp(sys, "Darwin")) {
		json_set_str(o, "os_name", "macOS");
		put(o, "os_version", value_of(t, len, "sw_vers.productVersion"));
		put(o, "os_build", value_of(t, len, "sw_vers.buildVersion"));
		put(o, "hw_model", value_of(t, len, "sysctl.hw.model"));
		put(o, "cpu_model", value_of(t, len,
					     "sysctl.machdep.cpu.brand_string"));
		put_num(o, "cpu_cores", value_of(t, len, "sysctl.hw.ncpu"), 1);
		put_num(o, "memory_bytes", value_of(t, len, "sysctl.hw.memsize"), 1);
		put_num(o, "is_vm", value_of(t, len,
					     "sysctl.kern.hv_vmm_present"), 1);
		put_num(o, "gpu_cores", value_of(t, len, "sp.gpu_cores"), 1);
		put(o, "gpu", value_of(t, len, "sp.gpu_model"));
		v = value_of(t, len, "csrutil.status");
		if (v && strstr(v, "disabled"))
			json_set_str(o, "sip", "disabled");
		else if (v && strstr(v, "enabled"))
			json_set_str(o, "sip", "enabled");
		free(v);
		v = value_of(t, len, "pvg.unrestricted");
		if (v && *v)
			json_set_num(o, "pvg_unrestricted", !strcmp(v, "1"));
		free(v);
		/* pmset -g therm: a recorded warning level or a limit < 100 */
		while (pos < len) {
			const char *nl = memchr(t + pos, '\n', len - pos);
			size_t end = nl ? (size_t)(nl - t) : len;
			char *line = xstrndup(t + pos, end - pos);
			char *eq = strstr(line, "Limit");

			pos = end + 1;
			if (!strncmp(line, "pmset.therm=", 12)) {
				const char *l = line + 12;
				if ((strstr(l, "warning level") &&
				     !strstr(l, "No ")) ||
				    (eq && strchr(eq, '=') &&
				     atoi(strchr(eq, '=') + 1) < 100)) {
					add_warning(w, xstrfmt(
						"thermal or performance warning: "
						"'%s'", l));
					json_set_str(o, "thermal", "warning");
				}
			}
			free(line);
		}
		v = value_of(t, len, "pmset.therm");
		if (!json_get(o, "thermal") && v)
			json_set_str(o, "thermal", "nominal");
		free(v);
	} else {
		put(o, "os_name", value_of(t, len, "linux.os_name"));
		put(o, "os_version", value_of(t, len, "linux.os_version"));
		/* Linux has no OS build; the kernel release plays its part. */
		put(o, "os_build", value_of(t, len, "os.uname_r"));
		put(o, "os_pretty", value_of(t, len, "linux.os_pretty"));
		put(o, "hw_model", value_of(t, len, "linux.hw_model"));
		put(o, "cpu_model", value_of(t, len, "linux.cpu_model"));
		put_num(o, "cpu_cores", value_of(t, len, "linux.cpu_cores"), 1);
		put_num(o, "memory_bytes", value_of(t, len, "linux.mem_kb"), 1024);
		v = value_of(t, len, "linux.hypervisor");
		json_set_num(o, "is_vm", v && atoi(v) > 0);
		free(v);
		put(o, "cpu_governor", value_of(t, len, "linux.governor"));
		put(o, "gpu", linux_gpu(t, len));
	}
	free(sys);
	v = value_of(t, len, "load.avg");
	if (v && *v) {
		load = atof(v);
		json_set_num(o, "load1", load);
	}
	free(v);
	if (json_type(json_get(o, "cpu_cores")) == JSON_NUMBER)
		cores = json_num(json_get(o, "cpu_cores"));
	if (cores > 0 && load > 0.5 * cores)
		add_warning(w, xstrfmt("load average %.2f is above 0.5 per "
				       "core (%g cores)", load, cores));
	v = value_of(t, len, "proc.llama");
	if (v && atoi(v) > 0) {
		json_set_num(o, "llama_processes", atoi(v));
		add_warning(w, xstrfmt("%d other llama process%s running",
				       atoi(v), atoi(v) > 1 ? "es" : ""));
	}
	free(v);
	if (!*warnings)
		*warnings = xcalloc(1, sizeof(char *));
	/* the probe's object, as base/json prints it */
	fingerprint_from_json(fp, o, NULL);
	json_free(o);
}

int
fingerprint_add_gpu_probe(struct fingerprint *fp, const char *t, size_t len)
{
	char *v;

	if (fp->gpu)
		return 0;
	v = linux_gpu(t, len);
	if (!v || !*v) {
		free(v);
		return 0;
	}
	fingerprint_set(fp, "gpu", v);
	free(v);
	return 1;
}
