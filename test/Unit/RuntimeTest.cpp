//===- RuntimeTest.cpp - Unit tests of the CUDA runtime's pieces -*- C++ -*-===//
//
// The parts of norm_cuda_runtime that need no driver: the cache of kernel
// handles that mgpuModuleGetFunction answers repeated launches from.
//
//===----------------------------------------------------------------------===//

#include "FunctionCache.h"

#include "gtest/gtest.h"

#include <memory>
#include <thread>
#include <vector>

using norm_cuda_runtime::FunctionCache;

namespace {

void *handle(uintptr_t value) { return reinterpret_cast<void *>(value); }

TEST(FunctionCache, KeyedByModuleAndNameAddress) {
  auto cache = std::make_unique<FunctionCache>();
  static const char nameA[] = "kernel";
  static const char nameB[] = "kernel"; // same text, another constant
  EXPECT_EQ(cache->lookup(handle(0x1000), nameA), nullptr);
  EXPECT_TRUE(cache->insert(handle(0x1000), nameA, handle(0xa)));
  EXPECT_TRUE(cache->insert(handle(0x2000), nameA, handle(0xb)));
  EXPECT_EQ(cache->lookup(handle(0x1000), nameA), handle(0xa));
  EXPECT_EQ(cache->lookup(handle(0x2000), nameA), handle(0xb));
  EXPECT_EQ(cache->lookup(handle(0x1000), nameB), nullptr);
  // Re-inserting a key replaces its handle rather than adding an entry.
  EXPECT_TRUE(cache->insert(handle(0x1000), nameA, handle(0xc)));
  EXPECT_EQ(cache->lookup(handle(0x1000), nameA), handle(0xc));
  cache->clear();
  EXPECT_EQ(cache->lookup(handle(0x1000), nameA), nullptr);
  EXPECT_EQ(cache->lookup(handle(0x2000), nameA), nullptr);
}

TEST(FunctionCache, FullTableStopsCachingAndKeepsAnswers) {
  auto cache = std::make_unique<FunctionCache>();
  std::vector<char> names(FunctionCache::kCapacity + 8);
  for (size_t i = 0; i < FunctionCache::kCapacity; ++i)
    ASSERT_TRUE(cache->insert(handle(0x40), &names[i], handle(i + 1)));
  EXPECT_FALSE(cache->insert(handle(0x40), &names[FunctionCache::kCapacity],
                             handle(0x999)));
  EXPECT_EQ(cache->lookup(handle(0x40), &names[FunctionCache::kCapacity]),
            nullptr);
  for (size_t i = 0; i < FunctionCache::kCapacity; ++i)
    ASSERT_EQ(cache->lookup(handle(0x40), &names[i]), handle(i + 1)) << i;
}

TEST(FunctionCache, ConcurrentLookupsAndInserts) {
  auto cache = std::make_unique<FunctionCache>();
  static char names[64];
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&cache, t] {
      for (int round = 0; round < 200; ++round)
        for (int i = 0; i < 64; ++i) {
          void *module = handle(0x100 * (t + 1));
          void *found = cache->lookup(module, &names[i]);
          if (!found)
            cache->insert(module, &names[i], handle(1000 * (t + 1) + i));
          else
            ASSERT_EQ(found, handle(1000 * (t + 1) + i));
        }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 64; ++i)
      EXPECT_EQ(cache->lookup(handle(0x100 * (t + 1)), &names[i]),
                handle(1000 * (t + 1) + i));
}

} // namespace
