// gpu_cubin_test.cu - tiny kernels for the cubin loader tests (tests/unit/test_gpu.c).
// Not part of the kernel library. Regenerate the committed cubins with
//   nvcc -arch=sm_90 -cubin -O3 -o gpu_cubin_test.sm_90.cubin gpu_cubin_test.cu
//   nvcc -arch=sm_87 -cubin -O3 -o gpu_cubin_test.sm_87.cubin gpu_cubin_test.cu
// add:     c[i] = a[i] + b[i] for i < n (4 parameters: 3 pointers, 1 int)
// scale:   uses a __device__ global (relocation into .nv.constant4 / code), static shared
//          memory and __syncthreads (barrier), and __launch_bounds__(256)
__device__ float gbias[16];
__device__ int gcounter = 7;

extern "C" __global__ void add(float *c, const float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

extern "C" __global__ void __launch_bounds__(256) scale(float *x, float s, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n)
        x[i] = tile[blockDim.x - 1 - threadIdx.x] * s + gbias[i & 15] + (float)gcounter;
}
