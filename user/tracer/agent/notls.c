// SPDX-License-Identifier: MIT
/*
 * notls.c - linked into the static heapsnoop only (the Makefile's
 * HEAPSNOOP_STATIC_OBJ): the GnuTLS functions Debian's libmicrohttpd.a
 * calls, each refusing. Debian builds libmicrohttpd with HTTPS, and
 * GnuTLS's own static closure is not shipped (no libp11-kit.a, no
 * libunistring.a), so the one static binary could not link it. The
 * agent never asks for TLS (httpd.c passes no MHD_USE_TLS), so none of
 * these is reached but the library's constructor and destructor's
 * gnutls_global_init() and _deinit(), which succeed and do nothing; the
 * rest return GNUTLS_E_INTERNAL_ERROR (-59), NULL or a message.
 * Serving TLS is a reverse proxy's job here (docs/AGENT.md). The names
 * are `nm -u libmicrohttpd.a`'s for 0.9.75; a new one fails the link.
 */
#include <stddef.h>
#include <stdlib.h>

#define NOTLS_ERR (-59)

void *(*gnutls_malloc)(size_t) = malloc;

int gnutls_global_init(void)
{
	return 0;
}

void gnutls_global_deinit(void)
{
}

const char *gnutls_strerror(int err)
{
	(void)err;
	return "TLS is not built into heapsnoop";
}

void *gnutls_session_get_ptr(void *session)
{
	(void)session;
	return NULL;
}

/* The rest: every one an error, if anything called it. */
#define REFUSE(name) \
	int name(void); \
	int name(void) { return NOTLS_ERR; }
REFUSE(gnutls_alpn_set_protocols)
REFUSE(gnutls_bye)
REFUSE(gnutls_certificate_allocate_credentials)
REFUSE(gnutls_certificate_free_credentials)
REFUSE(gnutls_certificate_server_set_request)
REFUSE(gnutls_certificate_set_dh_params)
REFUSE(gnutls_certificate_set_retrieve_function2)
REFUSE(gnutls_certificate_set_retrieve_function3)
REFUSE(gnutls_certificate_set_x509_key_mem)
REFUSE(gnutls_certificate_set_x509_key_mem2)
REFUSE(gnutls_certificate_set_x509_trust_mem)
REFUSE(gnutls_cipher_get)
REFUSE(gnutls_credentials_set)
REFUSE(gnutls_deinit)
REFUSE(gnutls_dh_params_deinit)
REFUSE(gnutls_dh_params_import_pkcs3)
REFUSE(gnutls_dh_params_init)
REFUSE(gnutls_handshake)
REFUSE(gnutls_init)
REFUSE(gnutls_priority_deinit)
REFUSE(gnutls_priority_init)
REFUSE(gnutls_priority_set)
REFUSE(gnutls_protocol_get_version)
REFUSE(gnutls_psk_allocate_server_credentials)
REFUSE(gnutls_psk_free_server_credentials)
REFUSE(gnutls_psk_set_server_credentials_function)
REFUSE(gnutls_record_check_pending)
REFUSE(gnutls_record_get_direction)
REFUSE(gnutls_record_recv)
REFUSE(gnutls_record_send)
REFUSE(gnutls_session_set_ptr)
REFUSE(gnutls_transport_set_int2)
