#include "hvd/device.h"

#include <utility>

namespace hvd {

DeviceBuffer::DeviceBuffer(Device* dev, size_t bytes) : dev_(dev) { reserve(bytes); }

DeviceBuffer::~DeviceBuffer() {
  if (dev_ && data_) dev_->release(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : dev_(std::exchange(o.dev_, nullptr)),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (dev_ && data_) dev_->release(data_);
    dev_ = std::exchange(o.dev_, nullptr);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

void DeviceBuffer::reserve(size_t bytes) {
  if (bytes <= size_ || !dev_) return;
  if (data_) dev_->release(data_);
  data_ = dev_->allocate(bytes);
  size_ = bytes;
}

}  // namespace hvd
