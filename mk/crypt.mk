# SPDX-License-Identifier: MIT
# lib/crypt (dm-crypt engine, LUKS2): Argon2 comes from libargon2 (the
# library cryptsetup uses), and the tests use libcryptsetup as their oracle.
# Both are required (scripts/configure.sh stops the build naming the Debian
# package); WITHOUT_ARGON2=1 builds without Argon2 on purpose (LUKS2 keyslots
# then take pbkdf2 only, and --version says -argon2).  Object goals that do
# not build the native test binary (the cross builds: their sysroot has no
# libcryptsetup) compile the tests without that oracle.
DEP_LIBS += $(ARGON2_LIBS)
TEST_LIBS += $(LIBCRYPTSETUP_LIBS)
# Debian's cross compilers also search the host's /usr/include, so a
# header alone says nothing: what pkg-config does not find is left out.
ifneq ($(HAVE_ARGON2),1)
BASE_CFLAGS += -DDMT_NO_ARGON2
endif
ifneq ($(HAVE_LIBCRYPTSETUP),1)
BASE_CFLAGS += -DDMT_NO_LIBCRYPTSETUP
endif
