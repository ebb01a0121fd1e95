/* hvd_capi.h: the C table through which a framework's op library reaches the runtime that
 * lives in hvd._core (one runtime per process).
 *
 * libhvd is linked statically into hvd._core. An op library (hvd.tensorflow's
 * _hvd_tf_ops.so, built with TensorFlow's compiler flags) must not link a second copy: it
 * would hold a second, never initialized runtime. Instead hvd._core hands out the address of
 * one static hvd_capi table (hvd._core.capi_table()), and the Python side passes it once to
 * the op library's hvd_capi_install() through ctypes. Only C types cross: the two sides may
 * be built with different C++ standards and flags.
 *
 * Numbering: dtypes as hvd::DataType, ops as hvd::OpType, reductions as hvd::ReduceOp,
 * status codes as hvd::StatusCode (runtime/include/hvd/{types,status}.h). */
#ifndef HVD_CAPI_H_
#define HVD_CAPI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HVD_CAPI_VERSION 1

enum hvd_capi_dtype {
  HVD_CAPI_UINT8 = 0, HVD_CAPI_INT8, HVD_CAPI_INT32, HVD_CAPI_INT64, HVD_CAPI_FLOAT16,
  HVD_CAPI_BFLOAT16, HVD_CAPI_FLOAT32, HVD_CAPI_FLOAT64
};
enum hvd_capi_op {
  HVD_CAPI_ALLREDUCE = 0, HVD_CAPI_ALLGATHER, HVD_CAPI_BROADCAST, HVD_CAPI_ALLTOALL,
  HVD_CAPI_REDUCESCATTER, HVD_CAPI_BARRIER, HVD_CAPI_JOIN
};
enum hvd_capi_code {
  HVD_CAPI_OK = 0, HVD_CAPI_INVALID_ARGUMENT, HVD_CAPI_MISMATCH, HVD_CAPI_PRECONDITION,
  HVD_CAPI_ABORTED, HVD_CAPI_TIMEOUT, HVD_CAPI_INTERNAL
};

/* One collective as the op states it. Pointers need only live until enqueue returns,
 * except input and output, which must stay valid until the request's callback ran. */
typedef struct hvd_capi_request {
  int op;               /* hvd_capi_op */
  const char* name;     /* unique among this rank's pending operations of the set */
  int dtype;            /* hvd_capi_dtype */
  int ndim;
  const int64_t* shape;
  const void* input;    /* what this rank contributes (broadcast: also where the result goes) */
  void* output;         /* allreduce: the result, input's shape (may alias input); else null */
  int reduce_op;        /* allreduce, reducescatter */
  double prescale;      /* allreduce */
  double postscale;     /* allreduce */
  int root;             /* broadcast: root rank in the process set */
  const int64_t* splits; /* alltoall: rows to each peer (nsplits 0: an even split) */
  int nsplits;
  int process_set;      /* 0: the world */
} hvd_capi_request;

/* What a finished request reports; valid only during the callback. */
typedef struct hvd_capi_result {
  int code;                /* hvd_capi_code */
  const char* message;     /* "" when ok */
  const void* data;        /* allgather, alltoall, reducescatter: the runtime-held result */
  size_t bytes;
  int ndim;
  const int64_t* shape;
  int nsplits;             /* alltoall: rows received from each peer */
  const int64_t* received_splits;
  int last_joined_rank;    /* join */
} hvd_capi_result;

/* Called exactly once per request: on the runtime's thread when it finished, or on the
 * enqueuing thread, before enqueue returns, when it was refused. Must not block. */
typedef void (*hvd_capi_done)(void* ctx, int index, const hvd_capi_result* result);

typedef struct hvd_capi {
  int version;          /* HVD_CAPI_VERSION */
  int (*initialized)(void);
  int (*rank)(void);
  int (*size)(void);
  int (*local_rank)(void);
  int (*local_size)(void);
  /* Enqueues reqs[0..n): n > 1 makes them one group (one negotiated unit; allreduces fuse).
   * done(ctx, i, result) is called once for each request i. */
  void (*enqueue)(const hvd_capi_request* reqs, int n, hvd_capi_done done, void* ctx);
} hvd_capi;

#ifdef __cplusplus
}
#endif

#endif /* HVD_CAPI_H_ */
