// Kafka's checkpoint file format and its atomic replacement (see checkpoint_file.h).
#include "core/storage/checkpoint_file.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "core/base/check.h"
#include "core/base/java_numbers.h"

namespace ksim {
namespace {

constexpr int32_t kOffsetCheckpointVersion = 0;  // OffsetCheckpointFile.CurrentVersion

// The directory holding `path` ("." for a bare name), for the fsync that makes a rename durable.
std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// BufferedReader.readLine: lines end at "\n", "\r" or "\r\n"; a last line without a terminator
// still counts; nothing follows a final terminator.
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = begin;
    while (end < text.size() && text[end] != '\n' && text[end] != '\r') ++end;
    lines.push_back(text.substr(begin, end - begin));
    if (end < text.size() && text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n') {
      ++end;
    }
    begin = end + 1;
  }
  return lines;
}

bool IsJavaWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

std::vector<std::string_view> SplitOnWhitespace(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t begin = 0;
  while (true) {
    size_t end = begin;
    while (end < line.size() && !IsJavaWhitespace(line[end])) ++end;
    fields.push_back(line.substr(begin, end - begin));
    if (end == line.size()) break;
    while (end < line.size() && IsJavaWhitespace(line[end])) ++end;
    begin = end;
  }
  while (!fields.empty() && fields.back().empty()) fields.pop_back();
  return fields;
}

CheckpointFile::CheckpointFile(Env& env, std::string path, int32_t version)
    : env_(&env), path_(std::move(path)), version_(version) {
  KSIM_CHECK(!path_.empty());
  KSIM_CHECK(version_ >= 0);
}

Status CheckpointFile::Write(const std::vector<std::string>& entry_lines) {
  std::string contents =
      std::to_string(version_) + "\n" + std::to_string(entry_lines.size()) + "\n";
  for (const std::string& line : entry_lines) {
    KSIM_CHECK(line.find_first_of("\r\n") == std::string::npos);
    contents += line;
    contents += '\n';
  }
  const std::string temp = temp_path();
  {
    KSIM_ASSIGN_OR_RETURN(std::unique_ptr<File> file, env_->OpenFile(temp, OpenMode::kTruncate));
    KSIM_RETURN_IF_ERROR(file->Append(AsBytes(contents)));
    // The bytes must be durable before the rename publishes them, or a crash could leave an
    // empty file under the real name.
    KSIM_RETURN_IF_ERROR(file->Sync());
    KSIM_CHECK(file->Size() == contents.size());
  }
  KSIM_RETURN_IF_ERROR(env_->RenameFile(temp, path_));
  return env_->SyncDir(ParentDir(path_));
}

Result<std::vector<CheckpointLine>> CheckpointFile::Read() const {
  Result<Bytes> bytes = ReadWholeFile(*env_, path_);
  if (!bytes.ok()) {
    if (bytes.status().code() == Errc::kNotFound) return std::vector<CheckpointLine>{};
    return bytes.status();
  }
  const std::string_view text = AsChars(*bytes);
  const std::vector<std::string_view> lines = SplitLines(text);
  std::vector<CheckpointLine> entries;
  if (lines.empty()) return entries;

  int32_t version = 0;
  if (!ParseJavaInt32(lines[0], version)) {
    return Corruption(1, "Malformed line in checkpoint file: '" + std::string(lines[0]) + "'");
  }
  if (version != version_) {
    return Corruption(1, "Unrecognized version of the checkpoint file: " + std::to_string(version) +
                             " (expected " + std::to_string(version_) + ")");
  }
  if (lines.size() < 2) return entries;
  int32_t expected_count = 0;
  if (!ParseJavaInt32(lines[1], expected_count) || expected_count < 0) {
    return Corruption(2, "Malformed line in checkpoint file: '" + std::string(lines[1]) + "'");
  }
  for (size_t i = 2; i < lines.size(); ++i) {
    entries.push_back(CheckpointLine{static_cast<int>(i + 1), std::string(lines[i])});
  }
  if (entries.size() != static_cast<size_t>(expected_count)) {
    return Corruption(static_cast<int>(lines.size()),
                      "Expected " + std::to_string(expected_count) +
                          " entries in checkpoint file, but found only " +
                          std::to_string(entries.size()));
  }
  return entries;
}

Status CheckpointFile::Corruption(int line_number, std::string_view what) const {
  return Status(Errc::kCorruption,
                path_ + ":" + std::to_string(line_number) + ": " + std::string(what));
}

Result<std::map<TopicPartition, Offset>> ReadOffsetCheckpoint(Env& env, const std::string& path) {
  CheckpointFile file(env, path, kOffsetCheckpointVersion);
  KSIM_ASSIGN_OR_RETURN(std::vector<CheckpointLine> lines, file.Read());
  std::map<TopicPartition, Offset> offsets;
  for (const CheckpointLine& line : lines) {
    const std::vector<std::string_view> fields = SplitOnWhitespace(line.text);
    int32_t partition = 0;
    int64_t offset = 0;
    if (fields.size() != 3 || fields[0].empty() || !ParseJavaInt32(fields[1], partition) ||
        !ParseJavaInt64(fields[2], offset) || partition < 0 || offset < 0) {
      return file.Corruption(line.line_number, "expected \"<topic> <partition> <offset>\"");
    }
    offsets[TopicPartition{std::string(fields[0]), PartitionId(partition)}] = Offset(offset);
  }
  return offsets;
}

namespace {

// `value`'s decimal digits (std::to_string's), appended.
void AppendDecimal(std::string& out, int64_t value) {
  char digits[24];
  const std::to_chars_result end = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, end.ptr);
}

}  // namespace

Status WriteOffsetCheckpoint(Env& env, const std::string& path,
                             const std::map<TopicPartition, Offset>& offsets) {
  std::vector<std::string> lines;
  lines.reserve(offsets.size());
  for (const auto& [tp, offset] : offsets) {
    KSIM_CHECK(offset.value() >= 0);
    // "<topic> <partition> <offset>", built in one string (a checkpoint lists every partition).
    std::string& line = lines.emplace_back();
    line.reserve(tp.topic.size() + 2 + 2 * std::numeric_limits<int64_t>::digits10 + 2);
    line += tp.topic;
    line += ' ';
    AppendDecimal(line, tp.partition.value());
    line += ' ';
    AppendDecimal(line, offset.value());
  }
  return CheckpointFile(env, path, kOffsetCheckpointVersion).Write(lines);
}

}  // namespace ksim
