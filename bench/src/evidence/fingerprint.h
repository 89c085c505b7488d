#ifndef FINGERPRINT_H
#define FINGERPRINT_H

#include <stddef.h>

/*
 * Environment fingerprints: flat JSON objects of facts about a target
 * (hardware, OS version and build, VM flag, GPU, llama.cpp build, shim
 * hash…). The identity is a SHA-256 over the stable keys only, so two
 * sessions on the same machine and software share it; the base identity
 * leaves out the OS version and build (the OS-update gate pairs on it).
 */

/* Writes both hex identities of fingerprint_json (65 bytes each). */
int fingerprint_identity(const char *fingerprint_json, char identity[65],
			 char base_identity[65]);


/*
 * The probe: a POSIX sh script run on the target through its transport.
 * It prints key=value lines and tolerates missing commands. Keys are
 * prefixed by their source: os., linux., sysctl., sw_vers., csrutil.,
 * pmset., sp., pvg., gpu., load., proc.
 */
extern const char fingerprint_probe_script[];

/*
 * Turns probe output into a fingerprint JSON object (normalised keys:
 * os_name, os_version, os_build, kernel, hw_model, cpu_model, cpu_cores,
 * memory_bytes, is_vm, gpu, gpu_cores, sip, thermal, cpu_governor, load1,
 * pvg_unrestricted, llama_processes…) and pre-flight warnings (a JSON
 * array of strings: thermal or performance warning, load average above
 * 0.5 per core, another llama process running). Both malloc'd.
 */
int fingerprint_parse(const char *probe_output, size_t len, char **json,
		      char **warnings_json);

/* Sets key to a string value in a fingerprint JSON text (reallocated). */
char *fingerprint_set(const char *json, const char *key, const char *value);

#endif
