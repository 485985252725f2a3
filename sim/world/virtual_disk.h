// VirtualDisk: the simulator's Env, one per simulated node. An in-memory file system (after
// LevelDB's helpers/memenv) that remembers, like LevelDB's db/fault_injection_test.cc, what an
// fsync made durable, so that Crash() can throw away exactly what a power loss would
// (docs/virtual-disk.md).
//
// Model. Every file has written bytes (the page cache, what reads see) and durable bytes (the
// page cache as of its last Sync, or of the last Flush of a mapping of it). Every directory has
// live entries (what ListDir and lookups see) and durable entries (its live entries as of its
// last SyncDir): creating, renaming or removing a name is durable only after SyncDir of the
// directory holding the name, as on ext4/XFS, which is why Kafka fsyncs a log directory after
// its .cleaned/.swap/.deleted renames. Crash() rebuilds the live tree from the durable one:
// files come back with their durable bytes (optionally plus a torn, optionally corrupted prefix
// of their unsynced tail), names never synced vanish, removals never synced come back.
// CleanShutdown() syncs everything first, so nothing is lost.
//
// Cost. Every operation draws a latency from its class's [min, max] range (read, write, sync,
// metadata) from the node's RandomStream and adds it to a busy-time counter; the node owning the
// disk takes it with TakeBusyTime() and charges it on virtual time (the disk itself knows no
// clock).
//
// Faults (each persistent until cleared, or one-shot): EIO on reads, on writes and namespace
// changes, on syncs; ENOSPC once the live bytes would exceed a capacity; corruption of a byte
// range (cached and durable bytes both). Injected errors are returned as Status, never thrown.
//
// Handles. Files and mappings opened before a Crash() or CleanShutdown() belong to the dead
// process: every operation on them returns kIoError and touches nothing of the new tree.
// Single-threaded; the disk outlives its handles. Every random choice comes from the RandomStream
// given at construction, integers only: the same seed and the same calls give the same disk.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/types.h"
#include "core/env/env.h"
#include "sim/kernel/random.h"

namespace ksim::sim {

// An inclusive range of microseconds an operation takes.
struct LatencyRangeUs {
  TimeUs min_us = 0;
  TimeUs max_us = 0;
};

struct VirtualDiskOptions {
  LatencyRangeUs read_latency;      // ReadAt, TransferTo (and the read half of CopyTo)
  LatencyRangeUs write_latency;     // Append, WriteAt, Truncate, mapping Resize
  LatencyRangeUs sync_latency;      // Sync, mapping Flush, SyncDir
  LatencyRangeUs metadata_latency;  // open, map, exists, size, rename, remove, list, mkdir, rmdir
  uint64_t capacity_bytes = 0;      // 0: unlimited; else ENOSPC past this many live bytes
};

struct CrashOptions {
  // For each file whose written bytes extend past its durable bytes, keep a random prefix
  // (possibly empty, possibly all) of that unsynced tail, as a write torn by power loss.
  bool tear_unsynced_tail = false;
  // Flip 1..8 random bytes inside each non-empty torn prefix. REQUIRES: tear_unsynced_tail.
  bool corrupt_torn_tail = false;
};

enum class DiskFault {
  kReadError,   // ReadAt, TransferTo, CopyTo fail with kIoError
  kWriteError,  // Append, WriteAt, Truncate, Resize, file creation, rename, remove, mkdir, rmdir
  kSyncError,   // Sync, Flush, SyncDir fail with kIoError and make nothing durable
};

enum class FaultPersistence {
  kOnce,          // fails the next matching operation, then clears itself
  kUntilCleared,  // fails every matching operation until ClearFault
};

// What the disk did. The copy and context-switch counts are the zero-copy lesson
// (docs/virtual-disk.md): a ReadAt is read(2), 2 copies (disk -> page cache by DMA, page cache
// -> user buffer) and 2 context switches; CopyTo adds send(2), 2 more copies (user buffer ->
// socket buffer, socket buffer -> NIC by DMA) and 2 more switches, 4 and 4 in all; TransferTo is
// sendfile(2) with gather DMA, 2 copies (disk -> page cache, page cache -> NIC) and 2 switches.
// Each copy moves a whole buffer: `copies` counts buffers, `bytes_copied` their bytes.
struct DiskCounters {
  uint64_t bytes_written = 0;  // payload of Append and WriteAt (stores through a mapping: none)
  uint64_t bytes_synced = 0;   // bytes written since the file's last sync, per Sync; mapped
                               // length per Flush
  uint64_t bytes_read = 0;     // bytes ReadAt returned plus bytes TransferTo sent
  uint64_t bytes_sent = 0;     // bytes TransferTo and CopyTo handed to a sink
  uint64_t copies = 0;
  uint64_t bytes_copied = 0;
  uint64_t context_switches = 0;
  uint64_t syncs = 0;      // successful Sync and Flush
  uint64_t dir_syncs = 0;  // successful SyncDir
  uint64_t crashes = 0;
  uint64_t injected_errors = 0;  // operations failed by an injected EIO or by the capacity
};

class VirtualDisk final : public Env {
 public:
  // `stream` is the node's disk stream (Seeds::StreamFor("disk/broker-1")).
  explicit VirtualDisk(RandomStream stream, VirtualDiskOptions options = {});
  ~VirtualDisk() override;
  VirtualDisk(const VirtualDisk&) = delete;
  VirtualDisk& operator=(const VirtualDisk&) = delete;

  // Env.
  Result<std::unique_ptr<File>> OpenFile(const std::string& path, OpenMode mode) override;
  Result<std::unique_ptr<MappedFile>> MapFile(const std::string& path, int64_t length) override;
  bool FileExists(const std::string& path) override;
  Result<uint64_t> FileSize(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;
  Result<std::vector<std::string>> ListDir(const std::string& dir) override;
  Status CreateDir(const std::string& dir) override;
  Status RemoveDir(const std::string& dir) override;
  bool DirExists(const std::string& dir) override;
  Status SyncDir(const std::string& dir) override;

  // Power loss: the tree becomes its durable image (see the model above); open handles go
  // stale. Draws from the stream only when tearing.
  void Crash(const CrashOptions& options = {});
  // The directories (paths from the root, sorted; "/" for the root) holding writes a power loss
  // now would lose or tear: a file's unsynced bytes, or a file with bytes whose entry the
  // directory has not synced. Reads nothing from the stream.
  std::vector<std::string> UnsyncedDirs() const;
  // Syncs every file and directory, then restarts like a crash that loses nothing.
  void CleanShutdown();
  // Makes everything written so far durable (every file's bytes, every directory's entries).
  void SyncAll();

  // Inspection: between BeginInspection and EndInspection (or while an InspectionScope is alive)
  // operations draw no latency, meet no injected fault (a one-shot fault stays armed) and count
  // nothing, so that an observer (the invariant checker, a tool) can read a node's files without
  // changing the run. Inspections nest. REQUIRES (End): an inspection is open.
  void BeginInspection();
  void EndInspection();
  class InspectionScope {
   public:
    explicit InspectionScope(VirtualDisk& disk);
    ~InspectionScope();
    InspectionScope(const InspectionScope&) = delete;
    InspectionScope& operator=(const InspectionScope&) = delete;

   private:
    VirtualDisk& disk_;
  };
  bool inspecting() const { return inspection_depth_ > 0; }

  // Microseconds of work done since the last call, and resets it (the owner charges it).
  TimeUs TakeBusyTime();
  TimeUs busy_time_us() const { return busy_time_us_; }

  void InjectFault(DiskFault fault, FaultPersistence persistence);
  void ClearFault(DiskFault fault);
  void ClearAllFaults();
  void set_capacity_bytes(uint64_t capacity_bytes) { options_.capacity_bytes = capacity_bytes; }
  // Flips every byte of [offset, offset + length) (clipped to the file) in both the written
  // and the durable bytes, each XORed with a random non-zero value. kNotFound when missing.
  Status CorruptRange(const std::string& path, uint64_t offset, uint64_t length);

  // Bytes of the files reachable in the live tree (a file under two names counts once).
  uint64_t used_bytes() const;
  // The bytes a crash without tearing would keep for `path` (the live name's durable bytes).
  Result<Bytes> DurableContents(const std::string& path) const;
  const DiskCounters& counters() const { return counters_; }
  // Incremented by every Crash and CleanShutdown; handles from an older generation are stale.
  uint64_t generation() const { return generation_; }

 private:
  friend class VirtualFile;
  friend class VirtualMappedFile;
  struct Node;
  struct Lookup;
  enum class Cost { kRead, kWrite, kSync, kMetadata };

  void Charge(Cost cost);
  // kIoError when `fault` is injected (consuming a one-shot fault), else ok.
  Status CheckFault(DiskFault fault, std::string_view operation, std::string_view path);
  // Whether CheckFault would fail an operation now (it fails only when this holds).
  bool FaultArmed(DiskFault fault) const;
  // kNoSpace when growing the live bytes by `growth_bytes` would pass the capacity.
  Status CheckSpace(uint64_t growth_bytes, const std::string& path);
  Result<Lookup> Resolve(const std::string& path) const;
  void Restart(const CrashOptions& options);

  RandomStream stream_;
  VirtualDiskOptions options_;
  std::shared_ptr<Node> root_;
  uint64_t generation_ = 0;
  // Moved whenever a directory is removed, moved or replaced, or the tree is rebuilt (a crash):
  // what a directory path resolved to before may differ only then (files come and go inside).
  uint64_t tree_generation_ = 0;
  // Resolve's last directories: the part of a path before its last '/' and the directory it
  // named, as of tree_generation `generation`. A log works on the files of its directory, that
  // directory in its data directory, and the data directory in the root, in turn; a walk down a
  // data directory of thousands of partitions costs a lookup per level.
  struct ResolvedDir {
    std::string prefix;
    std::shared_ptr<Node> dir;
    uint64_t generation = UINT64_MAX;
  };
  mutable std::array<ResolvedDir, 4> last_dirs_;
  mutable size_t next_last_dir_ = 0;  // the one replaced next
  TimeUs busy_time_us_ = 0;
  int inspection_depth_ = 0;
  DiskCounters counters_before_inspection_;
  DiskCounters counters_;
  bool fault_active_[3] = {false, false, false};
  bool fault_once_[3] = {false, false, false};
};

}  // namespace ksim::sim
