#define _POSIX_C_SOURCE 200809L
#include "evidence/fingerprint.h"
#include "models/hash.h"
#include "base/json.h"
#include "base/util.h"

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

static void
add_key(struct buf *b, const struct json *root, const char *key)
{
	const struct json *v = json_get(root, key);
	char *text;

	buf_adds(b, key);
	buf_addch(b, '=');
	if (json_str(v)) {
		buf_adds(b, json_str(v));
	} else if (v && json_type(v) != JSON_NULL) {
		text = json_print(v, 0);
		buf_adds(b, text);
		free(text);
	}
	buf_addch(b, '\n');
}

/* The JSON value at the start of text (NULL: "{}"), or NULL. */
static struct json *
parse_start(const char *text)
{
	size_t end;

	if (!text)
		text = "{}";
	return json_parse_prefix(text, strlen(text), &end);
}

int
fingerprint_identity(const char *fingerprint_json, char identity[65],
		     char base_identity[65])
{
	struct json *root = parse_start(fingerprint_json);
	struct buf all = BUF_INIT, base = BUF_INIT;
	size_t i;

	if (json_type(root) != JSON_OBJECT) {
		json_free(root);
		return error("fingerprint is not a JSON object");
	}
	for (i = 0; i < ARRAY_SIZE(identity_keys); i++) {
		add_key(&all, root, identity_keys[i]);
		if (strcmp(identity_keys[i], "os_version") &&
		    strcmp(identity_keys[i], "os_build"))
			add_key(&base, root, identity_keys[i]);
	}
	hash_buf_sha256(all.buf, all.len, identity);
	hash_buf_sha256(base.buf, base.len, base_identity);
	buf_release(&all);
	buf_release(&base);
	json_free(root);
	return 0;
}

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

static void
add_warning(struct json *w, char *msg)
{
	json_append(w, json_new_str(msg));
	free(msg);
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

int
fingerprint_parse(const char *t, size_t len, char **json, char **warnings_json)
{
	struct json *o = json_new_object(), *w = json_new_array();
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
		v = value_of(t, len, "gpu.nvidia");
		if (!v)
			v = value_of(t, len, "gpu.vulkan");
		put(o, "gpu", v);
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
	*json = json_print(o, 0);
	*warnings_json = json_print(w, 0);
	json_free(o);
	json_free(w);
	return 0;
}

char *
fingerprint_set(const char *json, const char *key, const char *value)
{
	struct json *o = parse_start(json);
	char *ret;

	if (json_type(o) != JSON_OBJECT) {
		json_free(o);
		o = json_new_object();
	}
	/* replaced or new, the key goes last */
	json_remove(o, key);
	json_set_str(o, key, value);
	ret = json_print(o, 0);
	json_free(o);
	return ret;
}
