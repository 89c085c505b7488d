#ifndef LMC_STATUS_H
#define LMC_STATUS_H

/*
 * The one symbol the shim exports besides its constructor, so a probe
 * in the same process can tell whether the shim is loaded and what it
 * did. Look it up with dlsym(RTLD_DEFAULT, LMC_STATUS_SYMBOL); absent
 * means the shim is not loaded. Returns a static string:
 *   "disabled"   configuration missing or malformed (process untouched)
 *   "armed"      waiting for the first Metal device initialisation
 *   "installed"  capability hooks are active
 *   "failed"     no device class or required methods; process untouched
 */
#define LMC_STATUS_SYMBOL "lume_metal_capabilities_status"
typedef const char *(*lmc_status_fn)(void);

#endif
