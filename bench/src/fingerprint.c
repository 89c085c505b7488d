#define _POSIX_C_SOURCE 200809L
#include "fingerprint.h"
#include "hash.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

/* The stable keys: facts that change only when the setup changes. */
static const char *const identity_keys[] = {
	"hw_model", "cpu_model", "cpu_cores", "memory_bytes", "is_vm",
	"gpu", "gpu_cores", "os_name", "os_version", "os_build",
	"llama_build", "llama_bench_sha256", "shim_sha256",
	"pvg_unrestricted",
};

static void
add_key(struct buf *b, const cJSON *root, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
	char *text;

	buf_adds(b, key);
	buf_addch(b, '=');
	if (cJSON_IsString(v)) {
		buf_adds(b, v->valuestring);
	} else if (v && !cJSON_IsNull(v)) {
		text = cJSON_PrintUnformatted(v);
		if (text)
			buf_adds(b, text);
		cJSON_free(text);
	}
	buf_addch(b, '\n');
}

int
fingerprint_identity(const char *fingerprint_json, char identity[65],
		     char base_identity[65])
{
	cJSON *root = cJSON_Parse(fingerprint_json ? fingerprint_json : "{}");
	struct buf all = BUF_INIT, base = BUF_INIT;
	size_t i;

	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
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
	cJSON_Delete(root);
	return 0;
}
