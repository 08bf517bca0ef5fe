# SPDX-License-Identifier: MIT
# Authenticated dm-crypt (lib/crypt/crypt_auth*.c): tests/kernel/tool/authimg
# is a test-only front end of that library that the kernel cases
# (tests/kernel/cases/crypt_auth.sh) use to make and check images on the
# host until crypt-tool has --integrity.  Built with test-build.
AUTHIMG := $(O)/tests/kernel/authimg
$(AUTHIMG): $(O)/tests/kernel/tool/authimg.o $(LIB)
	$(qecho) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)
test-build: $(AUTHIMG)
check-kernel: $(AUTHIMG)
