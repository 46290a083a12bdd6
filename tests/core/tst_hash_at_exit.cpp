// SPDX-License-Identifier: MIT
// The compiled-model cache's SHA-256 works in a static's destructor after main returns: the GUI
// plugins keep compiled models in a static list whose destructor joins a cc -O2 compile that
// hashes the new cache entry (core/symbolic/native_cache.cpp, sha256Hex). OpenSSL's default
// atexit handler, registered at its first use during main, runs before such destructors and
// frees the state the hash needs: this process then crashed at exit (SIGSEGV) or hashed to
// nothing, and exits non-zero either way.
#include <QtTest/QtTest>

#include <cstdlib>
#include <string>

#include "core/symbolic/native_cache.h"

namespace {

// FIPS 180-2's first example.
const std::string kAbcDigest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

// Constructed before main, so destroyed after every handler registered during main.
struct HashesAtExit {
  ~HashesAtExit() {
    if (sensode::symbolic::sha256Hex("abc") != kAbcDigest) std::_Exit(3);
  }
} hashesAtExit;

}  // namespace

class TestHashAtExit : public QObject {
  Q_OBJECT
 private slots:
  // The first use, as a process's first cache lookup.
  void hashesDuringMain() { QCOMPARE(sensode::symbolic::sha256Hex("abc"), kAbcDigest); }
};

QTEST_GUILESS_MAIN(TestHashAtExit)
#include "tst_hash_at_exit.moc"
