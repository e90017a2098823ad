// RAII wrappers for the cuDNN legacy descriptors the runners use.
#pragma once

#include <cudnn.h>

#include "check.hpp"

namespace tw {

template <class T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class CudnnDesc {
 public:
  CudnnDesc() { TW_CUDNN(Create(&desc_)); }
  ~CudnnDesc() { Destroy(desc_); }
  CudnnDesc(const CudnnDesc&) = delete;
  CudnnDesc& operator=(const CudnnDesc&) = delete;
  T get() const { return desc_; }

 private:
  T desc_{};
};

using TensorDesc = CudnnDesc<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc = CudnnDesc<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc = CudnnDesc<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                           cudnnDestroyConvolutionDescriptor>;
using PoolDesc = CudnnDesc<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;

}  // namespace tw
