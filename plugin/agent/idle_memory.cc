// SPDX-License-Identifier: Apache-2.0
// ReleaseStartupMemory: malloc_trim and MADV_DONTNEED on the binary's
// read-only segments.

#include "plugin/agent/idle_memory.h"

#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace k8s_agent {
namespace {

struct Walk {
  uintptr_t page = 4096;
  size_t unmapped = 0;
  bool main_seen = false;
};

int DropReadOnlySegments(dl_phdr_info* info, size_t, void* data) {
  auto* walk = static_cast<Walk*>(data);
  // The first object is the executable itself; the shared glibc pages
  // are shared with every process and cost this one almost nothing.
  if (walk->main_seen) return 1;
  walk->main_seen = true;
  auto page_down = [&](uintptr_t a) { return a & ~(walk->page - 1); };
  auto page_up = [&](uintptr_t a) {
    return (a + walk->page - 1) & ~(walk->page - 1);
  };
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    // PF_W also excludes RELRO, which lies inside the writable segment.
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) != 0) continue;
    uintptr_t begin = page_down(info->dlpi_addr + ph.p_vaddr);
    uintptr_t end = page_up(info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    // A page a writable segment also covers is that segment's (ld.so maps
    // it last): never drop it.
    for (int j = 0; j < info->dlpi_phnum; ++j) {
      const ElfW(Phdr)& w = info->dlpi_phdr[j];
      if (w.p_type != PT_LOAD || (w.p_flags & PF_W) == 0) continue;
      uintptr_t wb = page_down(info->dlpi_addr + w.p_vaddr);
      uintptr_t we = page_up(info->dlpi_addr + w.p_vaddr + w.p_memsz);
      if (wb <= begin && begin < we) begin = we;
      if (begin < wb && wb < end) end = wb;
    }
    if (begin >= end) continue;
    if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED) ==
        0) {
      walk->unmapped += end - begin;
    }
  }
  return 1;
}

}  // namespace

ReleasedMemory ReleaseStartupMemory() {
  ::malloc_trim(0);
  Walk walk;
  long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) walk.page = static_cast<uintptr_t>(page);
  ::dl_iterate_phdr(DropReadOnlySegments, &walk);
  ReleasedMemory released;
  released.unmapped_bytes = walk.unmapped;
  return released;
}

}  // namespace k8s_agent
