// ReadWholeFile and WriteFileAtomically over POSIX calls (EINTR retried).
#include "common/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hpo {

Status ReadWholeFile(const std::string& path, const std::string& what, std::string* bytes) {
  const auto failed = [&](int error) {
    return Status::BadInput(path + ": cannot read " + what + ": " + std::strerror(error));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failed(errno);
  bytes->clear();
  // One allocation for a regular file: growing by doubling would copy and fault in its pages twice.
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    bytes->reserve(static_cast<size_t>(info.st_size));
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return failed(error);
    }
    if (n == 0) break;
    bytes->append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, const void* data, size_t size) {
  const std::string temporary = path + ".tmp";
  const auto failed = [&](int error) {
    ::unlink(temporary.c_str());
    return Status::Failure("writing " + path + ": " + std::strerror(error));
  };
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return failed(errno);
  const char* bytes = static_cast<const char*>(data);
  size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, bytes + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(fd);
      return failed(error);
    }
    written += static_cast<size_t>(n);
  }
  // fsync before the rename: a crash or a full disk never leaves a short file under `path`.
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    return failed(error);
  }
  if (::close(fd) != 0) return failed(errno);
  if (::rename(temporary.c_str(), path.c_str()) != 0) return failed(errno);
  return Status::Ok();
}

}  // namespace hpo
