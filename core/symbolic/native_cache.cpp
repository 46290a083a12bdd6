// SPDX-License-Identifier: MIT
#include "core/symbolic/native_cache.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

namespace sensode::symbolic {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> cacheEnabled{true};

constexpr const char* kFormat = "sensode-native-cache 1";

std::string octalMode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Why a file or folder with this stat must not be trusted, or empty.
std::string distrust(const fs::path& path, const struct stat& st) {
  if (st.st_uid != geteuid())
    return path.string() + " is owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " +
           std::to_string(geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return path.string() + " is writable by group or others (mode " + octalMode(st.st_mode) + ")";
  return {};
}

// Reads all of `fd` from its start.
bool readAll(int fd, std::string& out) {
  out.clear();
  if (lseek(fd, 0, SEEK_SET) < 0) return false;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

bool writeAll(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string entryName(const std::string& key) { return "sensode-" + key + ".entry"; }

// The entry file's fields ("name value" lines after the format line).
std::map<std::string, std::string> parseEntry(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kFormat) return fields;
  while (std::getline(in, line)) {
    const auto space = line.find(' ');
    if (space != std::string::npos) fields[line.substr(0, space)] = line.substr(space + 1);
  }
  return fields;
}

// Opens a regular file without following a symlink; -1 when missing or not a plain file.
int openPlain(const fs::path& path, struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

void setNativeCacheEnabled(bool enabled) { cacheEnabled.store(enabled); }
bool nativeCacheEnabled() { return cacheEnabled.load(); }

NativeCacheEntry::NativeCacheEntry(NativeCacheEntry&& other) noexcept
    : tier(std::move(other.tier)), object(std::move(other.object)), fd(other.fd) {
  other.fd = -1;
}
NativeCacheEntry& NativeCacheEntry::operator=(NativeCacheEntry&& other) noexcept {
  if (this != &other) {
    if (fd >= 0) ::close(fd);
    tier = std::move(other.tier);
    object = std::move(other.object);
    fd = other.fd;
    other.fd = -1;
  }
  return *this;
}
NativeCacheEntry::~NativeCacheEntry() {
  if (fd >= 0) ::close(fd);
}
// The object's own path, not /proc/self/fd/N: glibc's dlopen returns an already loaded object
// whose name matches, and fd numbers are reused, so a second model would get the first one's
// code. Object names carry their content's digest, so one name is only ever one content; the
// folder being the user's own (0700, checked) keeps anyone else from swapping the file between
// the check and dlopen.
std::string NativeCacheEntry::loadPath() const { return object.string(); }

std::string sha256Hex(const std::string& bytes) { return sha256Hex({std::string_view(bytes)}); }

std::string sha256Hex(std::initializer_list<std::string_view> parts) {
  // OpenSSL frees its state in an atexit handler that it registers on first use, i.e. after the
  // statics constructed before that use, so it runs before their destructors. The GUI plugins
  // keep compiled models in such a static; its destructor joins a cc -O2 compile that then
  // hashed the new cache entry in freed OpenSSL state: a crash at exit (tst_event_views,
  // 2026-11-29, SIGSEGV in CRYPTO_THREAD_read_lock). Without the handler the process's exit
  // frees OpenSSL's memory instead.
  static const bool initialised = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1;
  if (!initialised) return {};
  const std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(),
                                                                  EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) return {};
  for (const std::string_view part : parts) {
    if (EVP_DigestUpdate(context.get(), part.data(), part.size()) != 1) return {};
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context.get(), digest, &length) != 1) return {};
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

std::string compilerIdentity(const std::string& program) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard lock(mutex);
  if (const auto it = known.find(program); it != known.end()) return it->second;
  fs::path found;
  std::error_code ec;
  if (program.find('/') != std::string::npos) {
    found = program;
  } else if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
      if (access(candidate.c_str(), X_OK) == 0) {
        found = candidate;
        break;
      }
    }
  }
  std::string identity = program + " (not found)";
  if (!found.empty()) {
    const fs::path real = fs::canonical(found, ec);
    struct stat st {};
    if (!ec && ::stat(real.c_str(), &st) == 0)
      identity = real.string() + " " + std::to_string(st.st_size) + " " +
                 std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }
  return known[program] = identity;
}

fs::path NativeCache::directory() {
  if (const char* d = std::getenv("SENSODE_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "sensode";
  if (const char* d = std::getenv("HOME"); d && *d) return fs::path(d) / ".cache" / "sensode";
  return fs::temp_directory_path() / ("sensode-cache-" + std::to_string(geteuid()));
}

double NativeCache::maxMegabytes() {
  const char* v = std::getenv("SENSODE_CACHE_MAX_MB");
  if (!v || !*v) return 256;
  char* end = nullptr;
  const double mb = std::strtod(v, &end);
  return end != v && mb >= 0 ? mb : 256;
}

NativeCache NativeCache::open() {
  NativeCache cache;
  cache.dir_ = directory();
  std::error_code ec;
  if (cache.dir_.has_parent_path()) fs::create_directories(cache.dir_.parent_path(), ec);
  if (::mkdir(cache.dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    cache.refusal_ = "cannot create " + cache.dir_.string() + ": " + std::strerror(errno);
    return cache;
  }
  struct stat st {};
  if (::stat(cache.dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    cache.refusal_ = cache.dir_.string() + " is not a folder";
    return cache;
  }
  cache.refusal_ = distrust(cache.dir_, st);
  return cache;
}

std::string NativeCache::key(const std::string& source, const std::string& compiler,
                             const std::string& options) const {
  const std::string header = std::string(kFormat) + "\nsensode " SENSODE_VERSION "\ncompiler " +
                             compilerIdentity(compiler) + "\noptions " + options + "\n";
  return sha256Hex({header, source});
}

fs::path NativeCache::temporaryPath(const std::string& key, const std::string& suffix) const {
  static std::atomic<unsigned> counter{0};
  return dir_ / ("tmp-" + key.substr(0, 16) + "-" + std::to_string(getpid()) + "-" +
                 std::to_string(counter++) + suffix);
}

std::optional<NativeCacheEntry> NativeCache::find(const std::string& key,
                                                  std::string& problem) const {
  problem.clear();
  const fs::path entryPath = dir_ / entryName(key);
  struct stat st {};
  const int entryFd = openPlain(entryPath, st);
  if (entryFd < 0) return std::nullopt;  // a miss
  std::string text;
  const bool read = readAll(entryFd, text);
  ::close(entryFd);
  if (const std::string why = distrust(entryPath, st); !why.empty()) {
    problem = "refused: " + why;
    return std::nullopt;
  }
  std::error_code ec;
  auto damaged = [&](const std::string& why, const fs::path& object) {
    problem = "damaged entry " + entryPath.filename().string() + " (" + why + "), rebuilt";
    fs::remove(entryPath, ec);
    if (!object.empty()) fs::remove(object, ec);
    return std::nullopt;
  };
  const auto fields = parseEntry(text);
  if (!read || fields.empty()) return damaged("unreadable or unknown format", {});
  if (fields.count("key") == 0 || fields.at("key") != key) return damaged("another key", {});
  if (fields.count("sensode") == 0 || fields.at("sensode") != SENSODE_VERSION)
    return damaged("from another build", {});
  const auto objectName = fields.find("object");
  if (objectName == fields.end() || objectName->second.find('/') != std::string::npos ||
      fields.count("sha256") == 0 || fields.count("size") == 0 || fields.count("tier") == 0)
    return damaged("incomplete", {});
  NativeCacheEntry entry;
  entry.object = dir_ / objectName->second;
  entry.tier = fields.at("tier");
  entry.fd = openPlain(entry.object, st);
  if (entry.fd < 0) return damaged("object missing", {});
  if (const std::string why = distrust(entry.object, st); !why.empty()) {
    problem = "refused: " + why;
    return std::nullopt;
  }
  std::string bytes;
  if (!readAll(entry.fd, bytes)) return damaged("object unreadable", entry.object);
  if (std::to_string(bytes.size()) != fields.at("size"))
    return damaged("size " + std::to_string(bytes.size()) + " instead of " + fields.at("size"),
                   entry.object);
  if (sha256Hex(bytes) != fields.at("sha256")) return damaged("SHA-256 mismatch", entry.object);
  // Least recently used by mtime: a hit makes the entry recent.
  futimens(entry.fd, nullptr);
  utimensat(AT_FDCWD, entryPath.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
  return entry;
}

std::string NativeCache::store(const std::string& key, const fs::path& temporary,
                               const std::string& tier) const {
  std::error_code ec;
  auto fail = [&](const std::string& why) {
    fs::remove(temporary, ec);
    return why;
  };
  struct stat st {};
  const int fd = openPlain(temporary, st);
  if (fd < 0) return fail("cannot read " + temporary.string());
  std::string bytes;
  const bool read = readAll(fd, bytes);
  fchmod(fd, 0700);
  ::close(fd);
  if (!read || bytes.empty()) return fail("cannot read " + temporary.string());
  const std::string digest = sha256Hex(bytes);
  // Objects are named by their content, entries by their key: an entry is only ever renamed
  // into place after the object it names, so a reader sees the old entry or the complete new one.
  const std::string objectName = "sensode-" + key + "-" + digest.substr(0, 16) + ".so";
  fs::rename(temporary, dir_ / objectName, ec);
  if (ec) return fail("cannot store " + objectName + ": " + ec.message());

  const fs::path entryPath = dir_ / entryName(key);
  std::string previousObject;
  {
    struct stat old {};
    const int oldFd = openPlain(entryPath, old);
    std::string text;
    if (oldFd >= 0 && readAll(oldFd, text)) {
      const auto fields = parseEntry(text);
      if (const auto it = fields.find("object"); it != fields.end()) previousObject = it->second;
    }
    if (oldFd >= 0) ::close(oldFd);
  }
  const std::string entryText = std::string(kFormat) + "\nsensode " SENSODE_VERSION "\nkey " +
                                key + "\ntier " + tier + "\nobject " + objectName + "\nsize " +
                                std::to_string(bytes.size()) + "\nsha256 " + digest + "\n";
  const fs::path entryTemporary = temporaryPath(key, ".entry");
  const int out = ::open(entryTemporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0) return std::string("cannot write ") + entryTemporary.string() + ": " + std::strerror(errno);
  const bool written = writeAll(out, entryText);
  ::close(out);
  if (!written) {
    fs::remove(entryTemporary, ec);
    return "cannot write " + entryTemporary.string();
  }
  fs::rename(entryTemporary, entryPath, ec);
  if (ec) {
    fs::remove(entryTemporary, ec);
    return "cannot store " + entryPath.string() + ": " + ec.message();
  }
  // The object the entry named before (tcc's, now replaced by cc's): a process that loaded it
  // keeps its mapping.
  if (!previousObject.empty() && previousObject != objectName &&
      previousObject.find('/') == std::string::npos)
    fs::remove(dir_ / previousObject, ec);
  evict(key);
  return {};
}

fs::path NativeCache::lockPath(const std::string& key) const {
  return dir_ / ("sensode-" + key + ".compiling");
}

fs::path NativeCache::pendingPath(const std::string& key) const {
  return dir_ / ("sensode-" + key + ".pending.so");
}

namespace {
// A lock of a job that cannot still be running (its machine restarted, or it was killed).
bool staleLock(const fs::path& lock) {
  std::error_code ec;
  const auto time = fs::last_write_time(lock, ec);
  return !ec && fs::file_time_type::clock::now() - time >
                    std::chrono::duration<double>(NativeCache::kStaleLockSeconds);
}
}  // namespace

bool NativeCache::tryLock(const std::string& key) const {
  const fs::path lock = lockPath(key);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      writeAll(fd, std::to_string(getpid()) + "\n");
      ::close(fd);
      return true;
    }
    if (errno != EEXIST || !staleLock(lock)) return false;
    std::error_code ec;
    fs::remove(lock, ec);
  }
  return false;
}

bool NativeCache::locked(const std::string& key) const {
  std::error_code ec;
  const fs::path lock = lockPath(key);
  return fs::exists(lock, ec) && !staleLock(lock);
}

std::size_t NativeCache::compilesUnderWay() const {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir_, ec))
    if (item.path().extension() == ".compiling" && !staleLock(item.path())) ++n;
  return n;
}

std::string NativeCache::adoptPending(const std::string& key) const {
  const fs::path pending = pendingPath(key);
  struct stat st {};
  const int fd = openPlain(pending, st);
  if (fd < 0) return "no pending object";
  ::close(fd);
  // Our own folder (0700, checked when opened): still, an object someone else could have
  // written is never stored, as find() never loads one.
  if (std::string why = distrust(pending, st); !why.empty()) return "refused: " + why;
  // Renamed to a temporary first: of two runs adopting at once, one stores it, the other misses.
  const fs::path temporary = temporaryPath(key, ".so");
  std::error_code ec;
  fs::rename(pending, temporary, ec);
  if (ec) return "no pending object";
  return store(key, temporary, "cc");
}

void NativeCache::evict(const std::string& keep) const {
  struct File {
    fs::path path;
    std::uintmax_t size;
    fs::file_time_type time;
  };
  std::error_code ec;
  std::map<std::string, std::vector<File>> byKey;  // entry + object(s) of each key
  std::uintmax_t total = 0;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& item : fs::directory_iterator(dir_, ec)) {
    if (!item.is_regular_file(ec)) continue;
    const std::string name = item.path().filename().string();
    const std::uintmax_t size = item.file_size(ec);
    const auto time = item.last_write_time(ec);
    if (name.rfind("tmp-", 0) == 0) {
      // A writer that died (killed mid-compilation): its temporaries go after an hour.
      if (now - time > std::chrono::hours(1)) fs::remove(item.path(), ec);
      else total += size;
      continue;
    }
    if (name.rfind("sensode-", 0) != 0 || name.size() < 8 + 64) continue;
    byKey[name.substr(8, 64)].push_back({item.path(), size, time});
    total += size;
  }
  const auto bound = static_cast<std::uintmax_t>(maxMegabytes() * 1024 * 1024);
  if (total <= bound) return;
  // Oldest first by the newest file of each key (a hit touches both).
  std::vector<std::pair<fs::file_time_type, std::string>> order;
  for (const auto& [key, files] : byKey) {
    auto newest = files.front().time;
    for (const File& f : files) newest = std::max(newest, f.time);
    order.emplace_back(newest, key);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [time, key] : order) {
    if (total <= bound) break;
    if (key == keep) continue;
    // The entry first: a reader then misses rather than finding an entry without its object.
    std::vector<File>& files = byKey[key];
    std::stable_partition(files.begin(), files.end(),
                          [](const File& f) { return f.path.extension() == ".entry"; });
    for (const File& f : files)
      if (fs::remove(f.path, ec)) total -= f.size;
  }
}

}  // namespace sensode::symbolic
