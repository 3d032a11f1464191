//===- FunctionCache.h - Kernel handles of loaded GPU modules ---*- C++ -*-===//
//
// Generated host code asks the runtime for a kernel's handle by name before
// every launch (`mgpuModuleGetFunction`). The cache answers repeated
// questions without the driver: a fixed open-addressing table keyed by the
// module handle and the address of the name (a constant of the generated
// code), under a mutex, with no allocation. A full table just stops
// caching.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_RUNTIME_CUDA_FUNCTIONCACHE_H
#define LIB_RUNTIME_CUDA_FUNCTIONCACHE_H

#include <cstddef>
#include <cstdint>
#include <pthread.h>

namespace norm_cuda_runtime {

class FunctionCache {
public:
  static constexpr size_t kCapacity = 512;

  /// The cached handle of (`module`, `name`), or nullptr.
  void *lookup(const void *module, const char *name) {
    Lock lock(mutex);
    for (size_t i = 0, slot = hash(module, name); i < kCapacity;
         ++i, slot = (slot + 1) % kCapacity) {
      const Entry &entry = entries[slot];
      if (!entry.module)
        return nullptr;
      if (entry.module == module && entry.name == name)
        return entry.function;
    }
    return nullptr;
  }

  /// Remembers `function` for (`module`, `name`); false when the table is
  /// full.
  bool insert(const void *module, const char *name, void *function) {
    Lock lock(mutex);
    for (size_t i = 0, slot = hash(module, name); i < kCapacity;
         ++i, slot = (slot + 1) % kCapacity) {
      Entry &entry = entries[slot];
      if (entry.module && !(entry.module == module && entry.name == name))
        continue;
      entry = {module, name, function};
      return true;
    }
    return false;
  }

  /// Forgets every handle (a module was unloaded: its handles are invalid,
  /// and a new module may get its address).
  void clear() {
    Lock lock(mutex);
    for (Entry &entry : entries)
      entry = Entry();
  }

private:
  struct Entry {
    const void *module = nullptr;
    const char *name = nullptr;
    void *function = nullptr;
  };
  struct Lock {
    explicit Lock(pthread_mutex_t &m) : m(m) { pthread_mutex_lock(&m); }
    ~Lock() { pthread_mutex_unlock(&m); }
    pthread_mutex_t &m;
  };

  static size_t hash(const void *module, const char *name) {
    uint64_t key = reinterpret_cast<uintptr_t>(module) * 0x9e3779b97f4a7c15u ^
                   reinterpret_cast<uintptr_t>(name);
    key ^= key >> 29;
    return static_cast<size_t>(key % kCapacity);
  }

  Entry entries[kCapacity];
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
};

} // namespace norm_cuda_runtime

#endif // LIB_RUNTIME_CUDA_FUNCTIONCACHE_H
