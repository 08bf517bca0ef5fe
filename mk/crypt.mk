# SPDX-License-Identifier: MIT
# lib/crypt (dm-crypt engine, LUKS2): Argon2 comes from libargon2 (the
# library cryptsetup uses), and the tests use libcryptsetup as their oracle.
# Where a sysroot (cross builds) lacks them, the code leaves out Argon2
# and the tests their libcryptsetup oracle (__has_include), so nothing
# links against a library that is not there.
CRYPT_LIBS := $(shell $(PKG_CONFIG) --libs libargon2 2>/dev/null)
CRYPT_TEST_LIBS := $(shell $(PKG_CONFIG) --libs libcryptsetup 2>/dev/null)
DEP_LIBS += $(CRYPT_LIBS)
TEST_LIBS += $(CRYPT_TEST_LIBS)
# Debian's cross compilers also search the host's /usr/include, so a
# header alone says nothing: what pkg-config does not find is left out.
ifeq ($(CRYPT_LIBS),)
BASE_CFLAGS += -DDMT_NO_ARGON2
endif
ifeq ($(CRYPT_TEST_LIBS),)
BASE_CFLAGS += -DDMT_NO_LIBCRYPTSETUP
endif
