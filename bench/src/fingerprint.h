#ifndef FINGERPRINT_H
#define FINGERPRINT_H

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

#endif
