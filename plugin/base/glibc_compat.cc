// SPDX-License-Identifier: Apache-2.0
// The two glibc >= 2.35 functions that the static libstdc++ and libgcc of
// this build machine (Debian 12: GCC 12 on glibc 2.36) call, defined here
// so the shipped binary needs nothing newer than GLIBC_2.34 and runs on
// Ubuntu 22.04, RHEL 9 and Debian 12+ (tests/portable checks objdump -T).
// Linked only into the statically linked runtime build
// (plugin/third_party.cmake forces both symbols in with -u). Both are weak:
// a fully static program (the delivery image's copier links libc.a) takes
// glibc's own definitions instead of clashing with them, while in the
// dynamically linked agent these are the only definitions the static link
// sees, so libc.so's newer versions are never referenced.

#include <dlfcn.h>
#include <link.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

// libstdc++'s std::random_device prefers arc4random (glibc 2.36); its
// object is pulled in by the copy-on-write string instantiations whether
// or not anything asks for randomness. getrandom(2) is glibc 2.25.
extern "C" __attribute__((weak)) uint32_t arc4random() noexcept {
  uint32_t v = 0;
  for (;;) {
    ssize_t n = ::getrandom(&v, sizeof(v), 0);
    if (n == static_cast<ssize_t>(sizeof(v))) return v;
    if (n < 0 && errno != EINTR) std::abort();  // No kernel entropy at all.
  }
}

namespace {

struct FindObject {
  uintptr_t pc;
  dl_find_object* out;
  bool found;
};

int FindObjectCallback(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* f = static_cast<FindObject*>(data);
  const ElfW(Phdr)* eh_frame = nullptr;
  uintptr_t lo = UINTPTR_MAX;
  uintptr_t hi = 0;
  bool contains = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type == PT_GNU_EH_FRAME) eh_frame = &p;
    if (p.p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + p.p_vaddr;
    uintptr_t end = start + p.p_memsz;
    if (start < lo) lo = start;
    if (end > hi) hi = end;
    if (f->pc >= start && f->pc < end) contains = true;
  }
  if (!contains) return 0;
  f->found = true;
  *f->out = dl_find_object{};
  f->out->dlfo_map_start = reinterpret_cast<void*>(lo);
  f->out->dlfo_map_end = reinterpret_cast<void*>(hi);
  f->out->dlfo_eh_frame =
      eh_frame == nullptr
          ? nullptr
          : reinterpret_cast<void*>(info->dlpi_addr + eh_frame->p_vaddr);
  return 1;
}

}  // namespace

// GCC 12's unwinder (libgcc_eh.a) finds a frame's unwind table with
// _dl_find_object (glibc 2.35) and has no fallback when it is linked in.
// The same answer from dl_iterate_phdr (what older unwinders used): the
// object whose PT_LOAD segments hold the address, and its PT_GNU_EH_FRAME.
// Only exceptions take this path, and they are rare here (yaml-cpp parse
// errors), so a linear walk is cheap enough.
extern "C" __attribute__((weak)) int _dl_find_object(void* address,
                                                     dl_find_object* result) {
  FindObject f{reinterpret_cast<uintptr_t>(address), result, false};
  ::dl_iterate_phdr(&FindObjectCallback, &f);
  return f.found && result->dlfo_eh_frame != nullptr ? 0 : -1;
}
