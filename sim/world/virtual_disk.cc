#include "sim/world/virtual_disk.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ksim::sim {

// A file's bytes, stored as a sparse file is: `held` is the prefix written so far, and every
// byte in [held.size(), size) reads as zero without being stored. Growing a file (ftruncate, a
// preallocated index mapping) stores nothing; storing a byte holds the prefix up to it. An index
// preallocated to 10 MiB thus costs what its entries do, in memory and in every copy (Sync,
// Flush, Crash). Indexes are written from the front, so the held prefix is what was written.
struct FileBytes {
  Bytes held;
  uint64_t size = 0;

  void Resize(uint64_t new_size) {
    size = new_size;
    if (held.size() > new_size) held.resize(new_size);
  }
  void Clear() { Resize(0); }
  // Holds every byte below min(end, size) (zeros where none was stored).
  void Hold(uint64_t end) {
    end = std::min(end, size);
    if (held.size() < end) held.resize(end, 0);
  }
  // Copies [position, position + out.size()) out. REQUIRES: within size.
  void Read(uint64_t position, MutableByteView out) const {
    KSIM_CHECK(position + out.size() <= size);
    const uint64_t from_held =
        position >= held.size() ? 0 : std::min<uint64_t>(out.size(), held.size() - position);
    if (from_held > 0) {
      std::copy_n(held.begin() + static_cast<ptrdiff_t>(position), from_held, out.begin());
    }
    std::fill(out.begin() + static_cast<ptrdiff_t>(from_held), out.end(), 0);
  }
  void Write(uint64_t position, ByteView data) {
    const uint64_t end = position + data.size();
    size = std::max(size, end);
    Hold(end);
    std::copy(data.begin(), data.end(), held.begin() + static_cast<ptrdiff_t>(position));
  }
  void Xor(uint64_t position, uint8_t flip) {
    KSIM_CHECK(position < size);
    Hold(position + 1);
    held[position] ^= flip;
  }
  Bytes ToBytes() const {
    Bytes out(size);
    Read(0, MutableByteView(out));
    return out;
  }
};

// A file or a directory. Handles hold files by shared_ptr, so a removed file stays readable
// through them (unlink semantics) and a crash can orphan them without freeing under them.
struct VirtualDisk::Node {
  using Entries = std::map<std::string, std::shared_ptr<Node>, std::less<>>;

  explicit Node(bool directory)
      : is_dir(directory), listing(directory ? std::make_unique<Listing>() : nullptr) {}
  Node(const Node&) = delete;  // `index` points into this node's own `entries`
  Node& operator=(const Node&) = delete;

  // Files: the bytes from `from` on may differ from the durable ones (a write, a truncation, a
  // mapped window handed out for writing).
  void Dirty(uint64_t from) { dirty_from = std::min(dirty_from, from); }
  // durable = data, copying only what may differ: a sync costs what was written since the last
  // one, not the file's length (a log flushed after every message).
  void MakeDurable() {
    const uint64_t keep = std::min({dirty_from, static_cast<uint64_t>(durable.held.size()),
                                    static_cast<uint64_t>(data.held.size())});
    durable.held.resize(keep);
    durable.held.insert(durable.held.end(), data.held.begin() + static_cast<ptrdiff_t>(keep),
                        data.held.end());
    durable.size = data.size;
    dirty_from = kClean;
  }

  // Directories: every change of an entry goes through these, which remember its name; SyncDir
  // then copies only the entries named since the last one (durable_entries = entries, at the
  // cost of what changed: a data directory holding thousands of partition directories is
  // synced each time one is created).
  void SetEntry(std::string_view name, std::shared_ptr<Node> node) {
    PutEntry(name, std::move(node));
    NoteChanged(name);
  }
  void EraseEntry(std::string_view name) {
    Listing& dir = *listing;
    auto it = FindEntry(name);
    if (it != dir.entries.end()) {
      if (!dir.index.empty()) dir.index.erase(it->first);
      dir.entries.erase(it);
    }
    NoteChanged(name);
  }
  // A name may be noted many times between syncs (a checkpoint's temporary file, written and
  // renamed each time): the list is cut to one of each whenever it has doubled since.
  void NoteChanged(std::string_view name) {
    std::vector<std::string>& names = listing->changed_names;
    names.emplace_back(name);
    if (names.size() >= 2 * listing->distinct_changed_names + 16) {
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
      listing->distinct_changed_names = names.size();
    }
  }
  // Sets the live entry alone (a rebuilt tree after a crash, whose entries are all durable).
  void PutEntry(std::string_view name, std::shared_ptr<Node> node) {
    Listing& dir = *listing;
    auto it = FindEntry(name);
    if (it != dir.entries.end()) {
      it->second = std::move(node);
      return;
    }
    it = dir.entries.emplace(std::string(name), std::move(node)).first;
    if (!dir.index.empty()) {
      dir.index.emplace(it->first, it);
    } else if (dir.entries.size() > kIndexFrom) {
      for (auto entry = dir.entries.begin(); entry != dir.entries.end(); ++entry) {
        dir.index.emplace(entry->first, entry);
      }
    }
  }
  Entries::iterator FindEntry(std::string_view name) {
    Listing& dir = *listing;
    if (dir.index.empty()) return dir.entries.find(name);
    auto found = dir.index.find(name);
    return found == dir.index.end() ? dir.entries.end() : found->second;
  }
  void MakeEntriesDurable() {
    Listing& dir = *listing;
    for (const std::string& name : dir.changed_names) {
      auto live = FindEntry(name);
      if (live == dir.entries.end()) {
        dir.durable_entries.erase(name);
      } else {
        dir.durable_entries[name] = live->second;
      }
    }
    dir.changed_names.clear();
    dir.distinct_changed_names = 0;
  }

  static constexpr uint64_t kClean = UINT64_MAX;

  bool is_dir;
  // Files.
  FileBytes data;                // written bytes: the page cache
  FileBytes durable;             // as of the last Sync / Flush
  uint64_t unsynced_bytes = 0;   // written through Append/WriteAt since then (for counters)
  uint64_t dirty_from = kClean;  // data and durable hold the same bytes below this
  // Directories: what only a directory holds, allocated for directories only (a data directory
  // holds thousands of files, each a node: a file's node stays a few words).
  struct Listing {
    // name -> node, live and as of the last SyncDir. std::map keeps names sorted. (std::less<>:
    // Resolve looks names up as views into the path.)
    Entries entries;
    // The live entries by name, hashed, from the moment a directory holds more than kIndexFrom
    // of them (a data directory of thousands of partition directories, looked up at every
    // operation under it) on; empty before (FindEntry then searches `entries`). Keys view the
    // names in `entries`. Changed only through PutEntry/EraseEntry.
    std::unordered_map<std::string_view, Entries::iterator> index;
    std::map<std::string, std::shared_ptr<Node>, std::less<>> durable_entries;
    // The names whose entry may differ between the two (outside it, both are absent or the
    // same). (A name may be there more than once; making it durable twice is making it durable
    // once.)
    std::vector<std::string> changed_names;
    size_t distinct_changed_names = 0;  // changed_names' size when last cut to one of each
  };
  static constexpr size_t kIndexFrom = 16;
  std::unique_ptr<Listing> listing;  // null for a file
};

// Where a path leads: the directory holding the last component, its name there, and the node
// (null when there is no such entry). The root has no parent. The parent is held by the tree (an
// operation never removes the directory holding what it looks up), the name is a view into the
// path looked up (which the operation holds): a lookup lives only while its operation runs.
struct VirtualDisk::Lookup {
  Node* parent = nullptr;
  std::string_view name;
  std::shared_ptr<Node> node;

  // `name` in `parent` (node null when it has no such entry).
  static Lookup In(Node& parent, std::string_view name) {
    Lookup lookup;
    auto it = parent.FindEntry(name);
    if (it != parent.listing->entries.end()) lookup.node = it->second;
    lookup.parent = &parent;
    lookup.name = name;
    return lookup;
  }
};

namespace {

constexpr int kMaxCorruptedBytes = 8;

Status NotFound(const std::string& operation, const std::string& path) {
  return Status(Errc::kNotFound, operation + " " + path + ": No such file or directory");
}
Status IsADirectory(const std::string& operation, const std::string& path) {
  return Status(Errc::kIoError, operation + " " + path + ": Is a directory");
}
Status NotADirectory(const std::string& operation, const std::string& path) {
  return Status(Errc::kIoError, operation + " " + path + ": Not a directory");
}
Status StaleHandle(const std::string& path) {
  return Status(Errc::kIoError, path + ": stale handle: the disk crashed or shut down since open");
}

int FaultIndex(DiskFault fault) { return static_cast<int>(fault); }

}  // namespace

// --- Files ---

class VirtualFile final : public File {
 public:
  VirtualFile(VirtualDisk* disk, std::shared_ptr<VirtualDisk::Node> node, std::string path)
      : disk_(disk),
        node_(std::move(node)),
        path_(std::move(path)),
        generation_(disk->generation_) {
    KSIM_CHECK(!node_->is_dir);
  }

  Status Append(ByteView data) override { return Write(node_->data.size, data); }
  Status WriteAt(uint64_t position, ByteView data) override { return Write(position, data); }

  Result<size_t> ReadAt(uint64_t position, MutableByteView out) const override {
    if (stale()) return StaleHandle(path_);
    disk_->Charge(VirtualDisk::Cost::kRead);
    KSIM_RETURN_IF_ERROR(disk_->CheckFault(DiskFault::kReadError, "pread", path_));
    const size_t count = Available(position, out.size());
    if (count > 0) node_->data.Read(position, out.first(count));
    // read(2): disk -> page cache (DMA), page cache -> user buffer; enter and leave the kernel.
    disk_->counters_.bytes_read += count;
    disk_->counters_.copies += 2;
    disk_->counters_.bytes_copied += 2 * count;
    disk_->counters_.context_switches += 2;
    return count;
  }

  Status Sync() override {
    if (stale()) return StaleHandle(path_);
    disk_->Charge(VirtualDisk::Cost::kSync);
    KSIM_RETURN_IF_ERROR(disk_->CheckFault(DiskFault::kSyncError, "fsync", path_));
    node_->MakeDurable();
    disk_->counters_.bytes_synced += node_->unsynced_bytes;
    disk_->counters_.syncs += 1;
    node_->unsynced_bytes = 0;
    return Status::Ok();
  }

  Status Truncate(uint64_t size) override {
    if (stale()) return StaleHandle(path_);
    disk_->Charge(VirtualDisk::Cost::kWrite);
    KSIM_RETURN_IF_ERROR(disk_->CheckFault(DiskFault::kWriteError, "ftruncate", path_));
    if (size > node_->data.size) {
      KSIM_RETURN_IF_ERROR(disk_->CheckSpace(size - node_->data.size, path_));
    }
    node_->Dirty(std::min(size, node_->data.size));
    node_->data.Resize(size);
    return Status::Ok();
  }

  uint64_t Size() const override { return node_->data.size; }
  const std::string& path() const override { return path_; }

  Result<size_t> TransferTo(uint64_t position, size_t count, ByteSink& sink) override {
    if (stale()) return StaleHandle(path_);
    disk_->Charge(VirtualDisk::Cost::kRead);
    KSIM_RETURN_IF_ERROR(disk_->CheckFault(DiskFault::kReadError, "sendfile", path_));
    const size_t sent = Available(position, count);
    // sendfile(2) with gather DMA: disk -> page cache, page cache -> NIC; one system call.
    disk_->counters_.bytes_read += sent;
    disk_->counters_.copies += 2;
    disk_->counters_.bytes_copied += 2 * sent;
    disk_->counters_.context_switches += 2;
    if (sent > 0) {
      node_->data.Hold(position + sent);
      KSIM_RETURN_IF_ERROR(sink.Send(ByteView(node_->data.held).subspan(position, sent)));
    }
    disk_->counters_.bytes_sent += sent;
    return sent;
  }

  Result<size_t> CopyTo(uint64_t position, size_t count, ByteSink& sink) override {
    if (stale()) return StaleHandle(path_);
    Bytes buffer(Available(position, count));
    KSIM_ASSIGN_OR_RETURN(size_t got, ReadAt(position, MutableByteView(buffer)));
    KSIM_CHECK(got == buffer.size());
    // send(2): user buffer -> socket buffer, socket buffer -> NIC (DMA); enter and leave.
    disk_->counters_.copies += 2;
    disk_->counters_.bytes_copied += 2 * got;
    disk_->counters_.context_switches += 2;
    if (got > 0) KSIM_RETURN_IF_ERROR(sink.Send(ByteView(buffer)));
    disk_->counters_.bytes_sent += got;
    return got;
  }

 private:
  bool stale() const { return generation_ != disk_->generation_; }

  // How many of `count` bytes from `position` the file has.
  size_t Available(uint64_t position, size_t count) const {
    const uint64_t size = node_->data.size;
    if (position >= size) return 0;
    return static_cast<size_t>(std::min<uint64_t>(count, size - position));
  }

  Status Write(uint64_t position, ByteView data) {
    if (stale()) return StaleHandle(path_);
    disk_->Charge(VirtualDisk::Cost::kWrite);
    KSIM_RETURN_IF_ERROR(disk_->CheckFault(DiskFault::kWriteError, "pwrite", path_));
    const uint64_t end = position + data.size();
    if (end > node_->data.size) {
      KSIM_RETURN_IF_ERROR(disk_->CheckSpace(end - node_->data.size, path_));
    }
    node_->Dirty(position);
    node_->data.Write(position, data);
    KSIM_CHECK(node_->data.size >= end);
    disk_->counters_.bytes_written += data.size();
    node_->unsynced_bytes += data.size();
    return Status::Ok();
  }

  VirtualDisk* disk_;
  std::shared_ptr<VirtualDisk::Node> node_;
  std::string path_;
  uint64_t generation_;
};

// A mapping is a window of `length_` bytes onto the file's page cache: stores through data()
// are what ReadAt sees at once (as with MAP_SHARED) and become durable on Flush.
class VirtualMappedFile final : public MappedFile {
 public:
  VirtualMappedFile(VirtualDisk* disk, std::shared_ptr<VirtualDisk::Node> node, std::string path,
                    uint64_t length)
      : disk_(disk),
        node_(std::move(node)),
        path_(std::move(path)),
        generation_(disk->generation_),
        length_(length) {
    KSIM_CHECK(!node_->is_dir);
    KSIM_CHECK(node_->data.size >= length_);
  }

  // The window, cut short if another handle truncated the file under it (where POSIX would
  // raise SIGBUS on access). data() holds the whole window; Window() only up to its end.
  MutableByteView data() override {
    node_->Dirty(0);
    node_->data.Hold(length());
    return MutableByteView(node_->data.held.data(), length());
  }
  ByteView data() const override {
    node_->data.Hold(length());
    return ByteView(node_->data.held.data(), length());
  }
  uint64_t length() const override { return std::min<uint64_t>(length_, node_->data.size); }
  MutableByteView Window(uint64_t offset, size_t count) override {
    KSIM_CHECK(offset + count <= length());
    node_->Dirty(offset);
    node_->data.Hold(offset + count);
    return MutableByteView(node_->data.held.data() + offset, count);
  }
  ByteView Window(uint64_t offset, size_t count) const override {
    KSIM_CHECK(offset + count <= length());
    // Reading never-stored bytes: zeros, without holding them (a lookup past the entries).
    if (offset >= node_->data.held.size() && count <= kZeros.size()) {
      return ByteView(kZeros.data(), count);
    }
    node_->data.Hold(offset + count);
    return ByteView(node_->data.held.data() + offset, count);
  }

  Status Resize(uint64_t length) override {
    if (stale()) return StaleHandle(path_);
    disk_->Charge(VirtualDisk::Cost::kWrite);
    KSIM_RETURN_IF_ERROR(disk_->CheckFault(DiskFault::kWriteError, "ftruncate", path_));
    if (length > node_->data.size) {
      KSIM_RETURN_IF_ERROR(disk_->CheckSpace(length - node_->data.size, path_));
    }
    node_->Dirty(std::min(length, node_->data.size));
    node_->data.Resize(length);
    length_ = length;
    return Status::Ok();
  }

  Status Flush() override {
    if (stale()) return StaleHandle(path_);
    disk_->Charge(VirtualDisk::Cost::kSync);
    KSIM_RETURN_IF_ERROR(disk_->CheckFault(DiskFault::kSyncError, "msync", path_));
    // msync writes the mapped range back; the model keeps one image per file, so the whole
    // page cache (the mapping and anything written past it) becomes durable.
    node_->MakeDurable();
    node_->unsynced_bytes = 0;
    disk_->counters_.bytes_synced += length_;
    disk_->counters_.syncs += 1;
    return Status::Ok();
  }

  const std::string& path() const override { return path_; }

 private:
  bool stale() const { return generation_ != disk_->generation_; }

  static constexpr std::array<uint8_t, 64> kZeros{};

  VirtualDisk* disk_;
  std::shared_ptr<VirtualDisk::Node> node_;
  std::string path_;
  uint64_t generation_;
  uint64_t length_;
};

// --- The disk ---

VirtualDisk::VirtualDisk(RandomStream stream, VirtualDiskOptions options)
    : stream_(stream), options_(options), root_(std::make_shared<Node>(true)) {
  for (const LatencyRangeUs& range : {options_.read_latency, options_.write_latency,
                                      options_.sync_latency, options_.metadata_latency}) {
    KSIM_CHECK(range.min_us >= 0);
    KSIM_CHECK(range.min_us <= range.max_us);
  }
}

VirtualDisk::~VirtualDisk() = default;

void VirtualDisk::BeginInspection() {
  if (inspection_depth_ == 0) counters_before_inspection_ = counters_;
  ++inspection_depth_;
}

void VirtualDisk::EndInspection() {
  KSIM_CHECK(inspection_depth_ > 0);
  --inspection_depth_;
  if (inspection_depth_ == 0) counters_ = counters_before_inspection_;
}

VirtualDisk::InspectionScope::InspectionScope(VirtualDisk& disk) : disk_(disk) {
  disk_.BeginInspection();
}

VirtualDisk::InspectionScope::~InspectionScope() { disk_.EndInspection(); }

void VirtualDisk::Charge(Cost cost) {
  if (inspection_depth_ > 0) return;
  const LatencyRangeUs* range = nullptr;
  switch (cost) {
    case Cost::kRead:
      range = &options_.read_latency;
      break;
    case Cost::kWrite:
      range = &options_.write_latency;
      break;
    case Cost::kSync:
      range = &options_.sync_latency;
      break;
    case Cost::kMetadata:
      range = &options_.metadata_latency;
      break;
  }
  KSIM_CHECK(range != nullptr);
  if (range->max_us == 0) return;  // free: draw nothing, so zero-cost disks consume no stream
  const TimeUs latency_us = stream_.UniformInt(range->min_us, range->max_us);
  KSIM_CHECK(latency_us >= range->min_us && latency_us <= range->max_us);
  busy_time_us_ += latency_us;
}

TimeUs VirtualDisk::TakeBusyTime() {
  const TimeUs busy_us = busy_time_us_;
  busy_time_us_ = 0;
  return busy_us;
}

void VirtualDisk::InjectFault(DiskFault fault, FaultPersistence persistence) {
  fault_active_[FaultIndex(fault)] = true;
  fault_once_[FaultIndex(fault)] = persistence == FaultPersistence::kOnce;
}

void VirtualDisk::ClearFault(DiskFault fault) {
  fault_active_[FaultIndex(fault)] = false;
  fault_once_[FaultIndex(fault)] = false;
}

void VirtualDisk::ClearAllFaults() {
  for (DiskFault fault : {DiskFault::kReadError, DiskFault::kWriteError, DiskFault::kSyncError}) {
    ClearFault(fault);
  }
}

bool VirtualDisk::FaultArmed(DiskFault fault) const {
  return fault_active_[FaultIndex(fault)] && inspection_depth_ == 0;
}

Status VirtualDisk::CheckFault(DiskFault fault, std::string_view operation, std::string_view path) {
  if (!FaultArmed(fault)) return Status::Ok();
  if (fault_once_[FaultIndex(fault)]) ClearFault(fault);
  counters_.injected_errors += 1;
  return Status(Errc::kIoError, std::string(operation) + " " + std::string(path) +
                                    ": Input/output error (injected)");
}

Status VirtualDisk::CheckSpace(uint64_t growth_bytes, const std::string& path) {
  if (options_.capacity_bytes == 0 || growth_bytes == 0) return Status::Ok();
  if (used_bytes() + growth_bytes <= options_.capacity_bytes) return Status::Ok();
  counters_.injected_errors += 1;
  return Status(Errc::kNoSpace, "write " + path + ": No space left on device (capacity " +
                                    std::to_string(options_.capacity_bytes) + " bytes)");
}

uint64_t VirtualDisk::used_bytes() const {
  uint64_t used = 0;
  std::unordered_set<const Node*> seen;  // membership only; never iterated
  std::vector<const Node*> pending = {root_.get()};
  while (!pending.empty()) {
    const Node* dir = pending.back();
    pending.pop_back();
    for (const auto& [name, child] : dir->listing->entries) {
      if (!seen.insert(child.get()).second) continue;
      if (child->is_dir) {
        pending.push_back(child.get());
      } else {
        used += child->data.size;
      }
    }
  }
  return used;
}

Result<VirtualDisk::Lookup> VirtualDisk::Resolve(const std::string& path) const {
  // A path of the form <prefix>/<name>, its name a plain component: when <prefix> is one of the
  // directories resolved last (last_dirs_) and no directory was removed, moved or replaced since,
  // only <name> is looked up. (A map of every directory resolved instead of the last four found
  // no fewer instructions: docs/BENCHMARKS.md, nineteenth and twenty-first changes. The last '/'
  // is found with memrchr: std::string::rfind tests a byte at a time, most of a lookup's cost.)
  const void* last_slash = memrchr(path.data(), '/', path.size());
  const size_t slash =
      last_slash == nullptr
          ? std::string::npos
          : static_cast<size_t>(static_cast<const char*>(last_slash) - path.data());
  const std::string_view name =
      slash == std::string::npos ? std::string_view() : std::string_view(path).substr(slash + 1);
  const bool plain_last = !name.empty() && name != "." && name != "..";
  if (plain_last) {
    const std::string_view prefix = std::string_view(path).substr(0, slash);
    for (const ResolvedDir& known : last_dirs_) {
      if (known.generation == tree_generation_ && known.prefix == prefix) {
        return Lookup::In(*known.dir, name);
      }
    }
  }
  // The components: views into `path`, empty ones and "." skipped ('..' is refused before any is
  // looked up).
  auto for_each_component = [&path](auto&& visit) {
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find('/', start);
      if (end == std::string::npos) end = path.size();
      const std::string_view component(path.data() + start, end - start);
      start = end + 1;
      if (component.empty() || component == ".") continue;
      if (!visit(component)) return false;
    }
    return true;
  };
  if (!for_each_component([](std::string_view component) { return component != ".."; })) {
    return Status(Errc::kInvalidArgument, path + ": '..' is not supported");
  }
  // Walks the directories on the way without copying a node pointer: `dir` points into its
  // parent's entries (or is the root), `last` is the component not yet walked into.
  const std::shared_ptr<Node>* dir = &root_;
  std::string_view last;
  Status failed;
  for_each_component([&](std::string_view component) {
    if (!last.empty()) {
      auto it = (*dir)->FindEntry(last);
      if (it == (*dir)->listing->entries.end()) {
        failed = NotFound("lookup", path);
        return false;
      }
      if (!it->second->is_dir) {
        failed = NotADirectory("lookup", path);
        return false;
      }
      dir = &it->second;
    }
    last = component;
    return true;
  });
  KSIM_RETURN_IF_ERROR(failed);
  if (last.empty()) {
    Lookup root;
    root.node = root_;
    return root;
  }
  Lookup lookup = Lookup::In(**dir, last);
  if (plain_last) {
    last_dirs_[next_last_dir_] = ResolvedDir{path.substr(0, slash), *dir, tree_generation_};
    next_last_dir_ = (next_last_dir_ + 1) % last_dirs_.size();
  }
  return lookup;
}

Result<std::unique_ptr<File>> VirtualDisk::OpenFile(const std::string& path, OpenMode mode) {
  Charge(Cost::kMetadata);
  KSIM_ASSIGN_OR_RETURN(Lookup lookup, Resolve(path));
  std::shared_ptr<Node> node = lookup.node;
  if (node != nullptr && node->is_dir) return IsADirectory("open", path);
  if (node == nullptr && mode == OpenMode::kOpenExisting) return NotFound("open", path);
  if (node != nullptr && mode == OpenMode::kCreateNew) {
    return Status(Errc::kAlreadyExists, "open " + path + ": File exists");
  }
  if (node == nullptr) {
    KSIM_CHECK(lookup.parent != nullptr);
    KSIM_RETURN_IF_ERROR(CheckFault(DiskFault::kWriteError, "open", path));
    node = std::make_shared<Node>(false);
    lookup.parent->SetEntry(lookup.name, node);
  } else if (mode == OpenMode::kTruncate) {
    KSIM_RETURN_IF_ERROR(CheckFault(DiskFault::kWriteError, "open", path));
    node->Dirty(0);
    node->data.Clear();
  }
  return std::unique_ptr<File>(std::make_unique<VirtualFile>(this, std::move(node), path));
}

Result<std::unique_ptr<MappedFile>> VirtualDisk::MapFile(const std::string& path, int64_t length) {
  KSIM_CHECK(length >= -1);
  Charge(Cost::kMetadata);
  KSIM_ASSIGN_OR_RETURN(Lookup lookup, Resolve(path));
  std::shared_ptr<Node> node = lookup.node;
  if (node != nullptr && node->is_dir) return IsADirectory("open", path);
  const bool creating = node == nullptr;
  const uint64_t old_size = creating ? 0 : node->data.size;
  const uint64_t map_length = length >= 0 ? static_cast<uint64_t>(length) : old_size;
  if (creating || map_length != old_size) {
    KSIM_RETURN_IF_ERROR(CheckFault(DiskFault::kWriteError, creating ? "open" : "ftruncate", path));
  }
  if (map_length > old_size) KSIM_RETURN_IF_ERROR(CheckSpace(map_length - old_size, path));
  if (creating) {
    KSIM_CHECK(lookup.parent != nullptr);
    node = std::make_shared<Node>(false);
    lookup.parent->SetEntry(lookup.name, node);
  }
  node->Dirty(std::min(map_length, old_size));
  node->data.Resize(map_length);
  return std::unique_ptr<MappedFile>(
      std::make_unique<VirtualMappedFile>(this, std::move(node), path, map_length));
}

bool VirtualDisk::FileExists(const std::string& path) {
  Charge(Cost::kMetadata);
  Result<Lookup> lookup = Resolve(path);
  return lookup.ok() && lookup->node != nullptr && !lookup->node->is_dir;
}

bool VirtualDisk::DirExists(const std::string& dir) {
  Charge(Cost::kMetadata);
  Result<Lookup> lookup = Resolve(dir);
  return lookup.ok() && lookup->node != nullptr && lookup->node->is_dir;
}

Result<uint64_t> VirtualDisk::FileSize(const std::string& path) {
  Charge(Cost::kMetadata);
  KSIM_ASSIGN_OR_RETURN(Lookup lookup, Resolve(path));
  if (lookup.node == nullptr) return NotFound("stat", path);
  if (lookup.node->is_dir) return IsADirectory("stat", path);
  return lookup.node->data.size;
}

Status VirtualDisk::RenameFile(const std::string& from, const std::string& to) {
  Charge(Cost::kMetadata);
  // Named in an error only: not built for a rename that succeeds (every checkpoint write).
  const auto both = [&] { return from + " -> " + to; };
  KSIM_ASSIGN_OR_RETURN(Lookup source, Resolve(from));
  if (source.node == nullptr) return NotFound("rename", both());
  if (source.parent == nullptr) {
    return Status(Errc::kInvalidArgument, "rename " + both() + ": root");
  }
  KSIM_ASSIGN_OR_RETURN(Lookup target, Resolve(to));
  if (target.parent == nullptr) {
    return Status(Errc::kInvalidArgument, "rename " + both() + ": root");
  }
  if (source.parent == target.parent && source.name == target.name) return Status::Ok();
  if (source.node->is_dir) {
    // A directory may not move under itself: walk up from the target's parent is not possible
    // (no parent links), so check that the source is not an ancestor by descending from it.
    std::vector<const Node*> pending = {source.node.get()};
    while (!pending.empty()) {
      const Node* dir = pending.back();
      pending.pop_back();
      if (dir == target.parent) {
        return Status(Errc::kInvalidArgument, "rename " + both() + ": Invalid argument");
      }
      for (const auto& [name, child] : dir->listing->entries) {
        if (child->is_dir) pending.push_back(child.get());
      }
    }
    if (target.node != nullptr && !target.node->is_dir) return NotADirectory("rename", both());
    if (target.node != nullptr && !target.node->listing->entries.empty()) {
      return Status(Errc::kInvalidArgument, "rename " + both() + ": Directory not empty");
    }
  } else if (target.node != nullptr && target.node->is_dir) {
    return IsADirectory("rename", both());
  }
  if (FaultArmed(DiskFault::kWriteError)) {
    KSIM_RETURN_IF_ERROR(CheckFault(DiskFault::kWriteError, "rename", both()));
  }
  // A directory moved or replaced: paths through it resolve elsewhere now.
  if (source.node->is_dir || (target.node != nullptr && target.node->is_dir)) ++tree_generation_;
  target.parent->SetEntry(target.name, source.node);
  source.parent->EraseEntry(source.name);
  return Status::Ok();
}

Status VirtualDisk::RemoveFile(const std::string& path) {
  Charge(Cost::kMetadata);
  KSIM_ASSIGN_OR_RETURN(Lookup lookup, Resolve(path));
  if (lookup.node == nullptr) return NotFound("unlink", path);
  if (lookup.node->is_dir) return IsADirectory("unlink", path);
  KSIM_RETURN_IF_ERROR(CheckFault(DiskFault::kWriteError, "unlink", path));
  lookup.parent->EraseEntry(lookup.name);
  return Status::Ok();
}

Result<std::vector<std::string>> VirtualDisk::ListDir(const std::string& dir) {
  Charge(Cost::kMetadata);
  KSIM_ASSIGN_OR_RETURN(Lookup lookup, Resolve(dir));
  if (lookup.node == nullptr) return NotFound("opendir", dir);
  if (!lookup.node->is_dir) return NotADirectory("opendir", dir);
  std::vector<std::string> names;
  names.reserve(lookup.node->listing->entries.size());
  for (const auto& [name, child] : lookup.node->listing->entries) names.push_back(name);  // sorted
  return names;
}

Status VirtualDisk::CreateDir(const std::string& dir) {
  Charge(Cost::kMetadata);
  // mkdir each prefix in turn ("mkdir -p").
  for (size_t end = 1; end <= dir.size(); ++end) {
    if (end != dir.size() && dir[end] != '/') continue;
    const std::string prefix = dir.substr(0, end);
    KSIM_ASSIGN_OR_RETURN(Lookup lookup, Resolve(prefix));
    if (lookup.node != nullptr) {
      if (lookup.node->is_dir) continue;
      return Status(Errc::kAlreadyExists, "mkdir " + prefix + ": File exists");
    }
    KSIM_RETURN_IF_ERROR(CheckFault(DiskFault::kWriteError, "mkdir", prefix));
    lookup.parent->SetEntry(lookup.name, std::make_shared<Node>(true));
  }
  return Status::Ok();
}

Status VirtualDisk::RemoveDir(const std::string& dir) {
  Charge(Cost::kMetadata);
  KSIM_ASSIGN_OR_RETURN(Lookup lookup, Resolve(dir));
  if (lookup.node == nullptr) return NotFound("rmdir", dir);
  if (!lookup.node->is_dir) return NotADirectory("rmdir", dir);
  if (lookup.parent == nullptr) return Status(Errc::kInvalidArgument, "rmdir " + dir + ": root");
  if (!lookup.node->listing->entries.empty()) {
    return Status(Errc::kInvalidArgument, "rmdir " + dir + ": Directory not empty");
  }
  KSIM_RETURN_IF_ERROR(CheckFault(DiskFault::kWriteError, "rmdir", dir));
  lookup.parent->EraseEntry(lookup.name);
  ++tree_generation_;
  return Status::Ok();
}

Status VirtualDisk::SyncDir(const std::string& dir) {
  Charge(Cost::kSync);
  KSIM_ASSIGN_OR_RETURN(Lookup lookup, Resolve(dir));
  if (lookup.node == nullptr) return NotFound("open", dir);
  if (!lookup.node->is_dir) return NotADirectory("open", dir);
  KSIM_RETURN_IF_ERROR(CheckFault(DiskFault::kSyncError, "fsync", dir));
  lookup.node->MakeEntriesDurable();
  counters_.dir_syncs += 1;
  return Status::Ok();
}

Status VirtualDisk::CorruptRange(const std::string& path, uint64_t offset, uint64_t length) {
  KSIM_ASSIGN_OR_RETURN(Lookup lookup, Resolve(path));
  if (lookup.node == nullptr) return NotFound("corrupt", path);
  if (lookup.node->is_dir) return IsADirectory("corrupt", path);
  Node& node = *lookup.node;
  const uint64_t end = std::min<uint64_t>(offset + length, node.data.size);
  for (uint64_t i = offset; i < end; ++i) {
    const auto flip = static_cast<uint8_t>(stream_.UniformInt(1, 255));
    node.Dirty(i);
    node.data.Xor(i, flip);
    if (i < node.durable.size) node.durable.Xor(i, flip);
  }
  return Status::Ok();
}

Result<Bytes> VirtualDisk::DurableContents(const std::string& path) const {
  KSIM_ASSIGN_OR_RETURN(Lookup lookup, Resolve(path));
  if (lookup.node == nullptr) return NotFound("open", path);
  if (lookup.node->is_dir) return IsADirectory("open", path);
  return lookup.node->durable.ToBytes();
}

// --- Crash and shutdown ---

void VirtualDisk::SyncAll() {
  std::vector<Node*> pending = {root_.get()};
  std::unordered_set<const Node*> seen = {root_.get()};  // membership only
  while (!pending.empty()) {
    Node* dir = pending.back();
    pending.pop_back();
    dir->MakeEntriesDurable();
    for (const auto& [name, child] : dir->listing->entries) {
      if (!seen.insert(child.get()).second) continue;
      if (child->is_dir) {
        pending.push_back(child.get());
      } else {
        child->MakeDurable();
        counters_.bytes_synced += child->unsynced_bytes;
        child->unsynced_bytes = 0;
      }
    }
  }
}

void VirtualDisk::CleanShutdown() {
  SyncAll();
  Restart(CrashOptions{});
}

std::vector<std::string> VirtualDisk::UnsyncedDirs() const {
  std::vector<std::string> out;
  std::vector<std::pair<const Node*, std::string>> pending = {{root_.get(), ""}};
  while (!pending.empty()) {
    auto [dir, path] = std::move(pending.back());
    pending.pop_back();
    const Node::Listing& listing = *dir->listing;
    bool unsynced = false;
    for (const auto& [name, child] : listing.entries) {
      if (child->is_dir) {
        pending.emplace_back(child.get(), path + "/" + name);
      } else if (child->dirty_from != Node::kClean) {
        unsynced = true;
      }
    }
    for (size_t i = 0; i < listing.changed_names.size() && !unsynced; ++i) {
      const std::string& name = listing.changed_names[i];
      auto live = listing.entries.find(name);
      if (live == listing.entries.end() || live->second->is_dir || live->second->data.size == 0) {
        continue;
      }
      auto durable = listing.durable_entries.find(name);
      unsynced = durable == listing.durable_entries.end() || durable->second != live->second;
    }
    if (unsynced) out.push_back(path.empty() ? "/" : path);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void VirtualDisk::Crash(const CrashOptions& options) {
  KSIM_CHECK(!options.corrupt_torn_tail || options.tear_unsynced_tail);
  counters_.crashes += 1;
  Restart(options);
}

// Builds a fresh tree from the durable one, in sorted-name order so that the stream's draws
// (tearing) happen in a fixed order. Fresh nodes keep stale handles away from the new tree. A
// file reachable under two durable names (renamed between two directories, both synced) stays
// one file; a directory reachable twice keeps only its first name, so the tree stays a tree.
void VirtualDisk::Restart(const CrashOptions& options) {
  std::unordered_map<const Node*, std::shared_ptr<Node>> rebuilt;  // lookups only
  auto recover_file = [&](const Node& old) {
    auto file = std::make_shared<Node>(false);
    file->data = old.durable;
    const uint64_t durable_size = old.durable.size;
    if (options.tear_unsynced_tail && old.data.size > durable_size) {
      const auto tail = static_cast<int64_t>(old.data.size - durable_size);
      const auto kept = static_cast<uint64_t>(stream_.UniformInt(0, tail));
      // The torn prefix of the tail: its stored bytes, then the zeros past them.
      const uint64_t held_end = std::min<uint64_t>(old.data.held.size(), durable_size + kept);
      if (held_end > durable_size) {
        file->data.Write(durable_size,
                         ByteView(old.data.held).subspan(durable_size, held_end - durable_size));
      }
      file->data.Resize(durable_size + kept);
      if (options.corrupt_torn_tail && kept > 0) {
        const int64_t flips = stream_.UniformInt(1, std::min<int64_t>(kMaxCorruptedBytes, kept));
        for (int64_t i = 0; i < flips; ++i) {
          const auto at = static_cast<uint64_t>(stream_.UniformInt(
              static_cast<int64_t>(durable_size), static_cast<int64_t>(durable_size + kept - 1)));
          file->data.Xor(at, static_cast<uint8_t>(stream_.UniformInt(1, 255)));
        }
      }
    }
    KSIM_CHECK(file->data.size >= durable_size);
    // What survived is on the platter now (a fresh node: nothing dirty).
    file->durable = file->data;
    return file;
  };
  auto new_root = std::make_shared<Node>(true);
  std::vector<std::pair<const Node*, Node*>> pending = {{root_.get(), new_root.get()}};
  rebuilt[root_.get()] = new_root;
  // Depth-first; children are pushed in reverse so that they are visited in name order.
  while (!pending.empty()) {
    auto [old_dir, new_dir] = pending.back();
    pending.pop_back();
    std::vector<std::pair<const Node*, Node*>> children;
    for (const auto& [name, old_child] : old_dir->listing->durable_entries) {
      auto found = rebuilt.find(old_child.get());
      if (found != rebuilt.end()) {
        if (old_child->is_dir) continue;  // a second name for a directory: dropped
        new_dir->PutEntry(name, found->second);
        continue;
      }
      std::shared_ptr<Node> fresh =
          old_child->is_dir ? std::make_shared<Node>(true) : recover_file(*old_child);
      rebuilt[old_child.get()] = fresh;
      new_dir->PutEntry(name, fresh);
      if (old_child->is_dir) children.emplace_back(old_child.get(), fresh.get());
    }
    new_dir->listing->durable_entries = new_dir->listing->entries;
    pending.insert(pending.end(), children.rbegin(), children.rend());
  }
  root_ = std::move(new_root);
  generation_ += 1;
  ++tree_generation_;
}

}  // namespace ksim::sim
