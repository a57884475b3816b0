#include <string.h>

#include <sodium.h>

#include "lib/config.h"
#include "lib/secret.h"

static void
fill(void *ctx, void *buf, size_t n)
{
	(void)ctx;
	randombytes_buf(buf, n);
}

const struct arps_rng secret_rng = { fill, NULL };

int
secret_init(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

void
secret_hash(const struct config *cfg, const char *purpose, const char *s, size_t n,
    unsigned char out[32])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, cfg->pepper, sizeof cfg->pepper, 32);
	crypto_generichash_update(&st, (const unsigned char *)purpose, strlen(purpose) + 1);
	crypto_generichash_update(&st, (const unsigned char *)s, n);
	crypto_generichash_final(&st, out, 32);
}

void
secret_anon_id(const struct config *cfg, const char *study_id, const char *agent_id,
    char out[ANON_BUFSZ])
{
	crypto_auth_hmacsha256_state st;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];

	crypto_auth_hmacsha256_init(&st, cfg->id_secret, sizeof cfg->id_secret);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)study_id, strlen(study_id));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"/", 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)agent_id, strlen(agent_id));
	crypto_auth_hmacsha256_final(&st, mac);
	anon_id_format(mac, out);
}

void
secret_pseudonym(const struct config *cfg, const char *account_id, const char *agent_id,
    char out[PSN_BUFSZ])
{
	crypto_auth_hmacsha256_state st;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];

	crypto_auth_hmacsha256_init(&st, cfg->id_secret, sizeof cfg->id_secret);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"psn/", 4);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)account_id, strlen(account_id));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"/", 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)agent_id, strlen(agent_id));
	crypto_auth_hmacsha256_final(&st, mac);
	pseudonym_format(mac, out);
}
