// An owning pointer to a COM object (D3D12's, DirectML's): Release() on reset and destruction,
// move-only. Free of any COM header: T only needs Release(), so that every layer that talks COM
// (d3d12, directml) shares this one rather than keeping its own.
#pragma once

namespace dmlbits::d3d12 {

template <class T>
class Com {
 public:
  Com() = default;
  Com(const Com&) = delete;
  Com& operator=(const Com&) = delete;
  Com(Com&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  Com& operator=(Com&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = o.p_;
      o.p_ = nullptr;
    }
    return *this;
  }
  ~Com() { reset(); }
  void reset() {
    if (p_) p_->Release();
    p_ = nullptr;
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }
  // For a creating call's void** out-parameter: releases what was held first.
  void** out() {
    reset();
    return reinterpret_cast<void**>(&p_);
  }

 private:
  T* p_ = nullptr;
};

}  // namespace dmlbits::d3d12
