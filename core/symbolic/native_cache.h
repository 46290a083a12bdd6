// SPDX-License-Identifier: MIT
// The on-disk cache of compiled models (native_compiler.h): shared objects from tcc (written by a
// model's first run, so that the second is native from its first evaluation) and from cc -O2
// (which replaces the tcc entry once a run lasts long enough to compile it). docs/native-cache.md
// describes it for users.
//
// Loading code from disk is code execution, so:
//  - the folder ($SENSODE_CACHE_DIR, else $XDG_CACHE_HOME/sensode, else ~/.cache/sensode) is
//    created with mode 0700, and a folder or entry owned by another user, or writable by group or
//    others, is never used (NativeCache::refusal() says why);
//  - every entry records the SHA-256 of its object (OpenSSL's libcrypto) and the object is checked
//    against it right before dlopen, so a truncated or corrupt object is rebuilt, never loaded;
//    objects are named by that digest, so a name is only ever one content;
//  - the key is the SHA-256 of Sensode's version, the compiler's identity (resolved path, size and
//    modification time of the binary: computed once per process without running it), the
//    compilers' options and the C source, so an entry from another build or compiler is a miss.
// Writes are atomic (unique temporary, then rename): concurrent processes and MPI ranks share
// the folder. After every write the folder is bounded to $SENSODE_CACHE_MAX_MB (default 256) by
// removing the least recently used entries (by mtime; a hit touches its entry); an object another
// process has loaded stays valid after its file is removed (Linux keeps the mapping).
#pragma once

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace sensode::symbolic {

// Process-wide switch (the CLI's --no-cache, the GUI's preference): new compiled models neither
// read nor write the cache while it is off. Not Qt: the GUI sets it from its QSettings.
void setNativeCacheEnabled(bool enabled);
bool nativeCacheEnabled();

// One verified entry, opened: `fd` stays open until the object is loaded from it.
struct NativeCacheEntry {
  std::string tier;            // "tcc" or "cc"
  std::filesystem::path object;
  int fd = -1;
  NativeCacheEntry() = default;
  NativeCacheEntry(const NativeCacheEntry&) = delete;
  NativeCacheEntry& operator=(const NativeCacheEntry&) = delete;
  NativeCacheEntry(NativeCacheEntry&& other) noexcept;
  NativeCacheEntry& operator=(NativeCacheEntry&& other) noexcept;
  ~NativeCacheEntry();
  // The path dlopen opens (the checked object's; see native_cache.cpp for why not the fd).
  std::string loadPath() const;
};

class NativeCache {
 public:
  // Opens (creating it 0700 when missing) the folder; usable() is false when it is refused.
  static NativeCache open();
  static std::filesystem::path directory();
  static double maxMegabytes();  // $SENSODE_CACHE_MAX_MB, default 256

  bool usable() const { return refusal_.empty(); }
  const std::string& refusal() const { return refusal_; }  // why the folder is not used
  const std::filesystem::path& folder() const { return dir_; }

  // The entry key of `source` compiled by `compiler` (a program name or path) with `options`.
  std::string key(const std::string& source, const std::string& compiler,
                  const std::string& options) const;
  // The verified entry of `key`, if any. A damaged entry (wrong digest, size, build or format)
  // is removed and `problem` says why; an entry another user could have written is left alone,
  // not loaded, and `problem` starts with "refused: ".
  std::optional<NativeCacheEntry> find(const std::string& key, std::string& problem) const;
  // Moves the finished object `temporary` (in folder()) into the cache as `key`'s entry of
  // `tier`, replacing an older one, then bounds the folder. Empty on success, else why not.
  std::string store(const std::string& key, const std::filesystem::path& temporary,
                    const std::string& tier) const;
  // A unique temporary path in the folder for an object being written.
  std::filesystem::path temporaryPath(const std::string& key, const std::string& suffix) const;
  // Removes least recently used entries until the folder holds at most maxMegabytes(), never
  // `keep`'s entry (so one entry larger than the bound still caches).
  void evict(const std::string& keep) const;

  // cc -O2 compiles that outlive the run which started them (detached_compile.h): the job holds
  // `sensode-<key>.compiling` while it runs and leaves its object as `sensode-<key>.pending.so`,
  // which the next run of the model adopts as the key's cc entry.
  std::filesystem::path lockPath(const std::string& key) const;
  std::filesystem::path pendingPath(const std::string& key) const;
  // Takes key's lock (O_EXCL); false when a compile of it is under way. A lock older than
  // kStaleLockSeconds is a job that died with its machine: it is removed and taken anew.
  bool tryLock(const std::string& key) const;
  bool locked(const std::string& key) const;  // a compile of key is under way
  std::size_t compilesUnderWay() const;       // fresh locks of any key in the folder
  // Stores key's finished pending object as its cc entry (store()); empty on success, else why
  // not ("no pending object" when there is none).
  std::string adoptPending(const std::string& key) const;
  static constexpr double kStaleLockSeconds = 3600;

 private:
  std::filesystem::path dir_;
  std::string refusal_;
};

// Lowercase hex SHA-256 of `bytes` (OpenSSL's libcrypto).
std::string sha256Hex(const std::string& bytes);
// The same of the parts' concatenation, without concatenating them (a model's C is megabytes).
std::string sha256Hex(std::initializer_list<std::string_view> parts);

// "path size mtime" of the compiler binary `program` resolves to through $PATH and symlinks;
// computed once per program per process (the key must not spawn a compiler per model).
std::string compilerIdentity(const std::string& program);

}  // namespace sensode::symbolic
