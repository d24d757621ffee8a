/* The glibc 2.38 symbols Debian's libnccl_static.a was built against (trixie and sid have glibc 2.38+; this
   machine has bookworm's 2.36). C23 changed strtol and scanf only for "0b" prefixes, which NCCL never parses,
   so the 2.36 functions answer for them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

long __isoc23_strtol(const char* s, char** end, int base) {
  return strtol(s, end, base);
}
long long __isoc23_strtoll(const char* s, char** end, int base) {
  return strtoll(s, end, base);
}
unsigned long __isoc23_strtoul(const char* s, char** end, int base) {
  return strtoul(s, end, base);
}
unsigned long long __isoc23_strtoull(const char* s, char** end, int base) {
  return strtoull(s, end, base);
}

int __isoc23_sscanf(const char* s, const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsscanf(s, format, args);
  va_end(args);
  return n;
}

int __isoc23_fscanf(FILE* f, const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vfscanf(f, format, args);
  va_end(args);
  return n;
}
