// Env helpers that work over any Env (JoinPath, ReadWholeFile, RemoveTree) and the default,
// copying implementations of File::TransferTo and File::CopyTo.
#include "core/env/env.h"

#include <algorithm>

namespace ksim {

namespace {
// Chunk for copying a file to a sink: large enough to amortize calls, small enough to
// keep a fetch's buffer modest.
constexpr size_t kCopyChunkBytes = 64 * 1024;
}  // namespace

Result<size_t> File::TransferTo(uint64_t position, size_t count, ByteSink& sink) {
  return CopyTo(position, count, sink);
}

Result<size_t> File::CopyTo(uint64_t position, size_t count, ByteSink& sink) {
  Bytes buffer(std::min(count, kCopyChunkBytes));
  size_t sent = 0;
  while (sent < count) {
    const size_t want = std::min(count - sent, buffer.size());
    KSIM_ASSIGN_OR_RETURN(size_t got,
                          ReadAt(position + sent, MutableByteView(buffer.data(), want)));
    if (got == 0) break;  // end of file
    KSIM_CHECK(got <= want);
    KSIM_RETURN_IF_ERROR(sink.Send(ByteView(buffer.data(), got)));
    sent += got;
  }
  return sent;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (name.empty()) return dir;
  // One allocation: the joined path is built in place.
  const bool slash = dir.back() != '/';
  std::string path;
  path.reserve(dir.size() + slash + name.size());
  path += dir;
  if (slash) path += '/';
  path += name;
  return path;
}

Result<Bytes> ReadWholeFile(Env& env, const std::string& path) {
  KSIM_ASSIGN_OR_RETURN(std::unique_ptr<File> file, env.OpenFile(path, OpenMode::kOpenExisting));
  // Read at the size the file has now, then on until a read gives nothing (it may be longer by
  // then). Not through a 64 KiB chunk: most files read whole are checkpoints of a few dozen
  // bytes, and zero-filling the chunk was most of reading one.
  constexpr size_t kTailBytes = 4096;
  Bytes contents;
  size_t length = 0;
  // A file of no bytes yet is read in a small first chunk (an empty checkpoint costs no 4 KiB
  // of zeros); a read that fills a chunk goes on in kTailBytes.
  constexpr size_t kFirstBytesOfAnEmptyFile = 64;
  size_t want = static_cast<size_t>(file->Size());
  if (want == 0) want = kFirstBytesOfAnEmptyFile;
  while (true) {
    contents.resize(length + want);
    KSIM_ASSIGN_OR_RETURN(size_t got,
                          file->ReadAt(length, MutableByteView(contents).subspan(length)));
    KSIM_CHECK(got <= want);
    length += got;
    if (got == 0) break;
    want = kTailBytes;
  }
  contents.resize(length);
  return contents;
}

Status RemoveTree(Env& env, const std::string& dir) {
  if (!env.DirExists(dir)) return Status::Ok();
  KSIM_ASSIGN_OR_RETURN(std::vector<std::string> names, env.ListDir(dir));
  for (const std::string& name : names) {
    const std::string path = JoinPath(dir, name);
    if (env.DirExists(path)) {
      KSIM_RETURN_IF_ERROR(RemoveTree(env, path));
    } else {
      KSIM_RETURN_IF_ERROR(env.RemoveFile(path));
    }
  }
  return env.RemoveDir(dir);
}

}  // namespace ksim
