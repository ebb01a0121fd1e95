// hvd.tensorflow's op definitions (the kernels are in kernels.cc). Every collective takes a
// scalar string `tensor_name` last: the name the ranks match the tensor by; empty means the
// node's name (graph mode, as Horovod keys its ops). Attributes follow Horovod's
// (reduce_op, prescale_factor, postscale_factor, root_rank, ignore_name_scope,
// process_set_id). Every op is stateful: a collective talks to the other ranks, so graph
// optimizers must neither fold one whose input is constant (it would run once, while the
// graph is optimized, and never again) nor merge two alike. tf.function's automatic control
// dependencies would chain stateful ops in program order, one allreduce after the other;
// hvd.tensorflow registers the collectives with them as order-insensitive ops that must
// run (mpi_ops.py), so a step's collectives are pending together and fuse.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"

namespace {

using tensorflow::shape_inference::InferenceContext;
using tensorflow::shape_inference::ShapeHandle;

// The types each collective moves: the reductions those the runtime reduces, the others any
// the runtime can carry (bool as bytes). Every collective has Horovod's two attributes of
// naming and membership.
#define HVD_REDUCE_TYPES "{uint8, int8, int32, int64, half, bfloat16, float, double}"
#define HVD_MOVE_TYPES "{uint8, int8, int32, int64, half, bfloat16, float, double, bool}"
#define HVD_COLLECTIVE_ATTRS \
  .Attr("ignore_name_scope: bool = false").Attr("process_set_id: int = 0").SetIsStateful()
#define HVD_SCALES .Attr("prescale_factor: float = 1.0").Attr("postscale_factor: float = 1.0")

// Outputs 0..n-1 have their input's shape with an unknown first dimension (allgather,
// reducescatter, alltoall: it depends on the other ranks).
absl::Status first_dim_unknown(InferenceContext* c, int n) {
  for (int i = 0; i < n; ++i) {
    ShapeHandle s;
    TF_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(i), 1, &s));
    TF_RETURN_IF_ERROR(c->ReplaceDim(s, 0, c->UnknownDim(), &s));
    c->set_output(i, s);
  }
  return absl::OkStatus();
}

absl::Status same_shapes(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
  return absl::OkStatus();
}

absl::Status grouped_first_dim_unknown(InferenceContext* c) { return first_dim_unknown(c, c->num_outputs()); }

}  // namespace

REGISTER_OP("HvdAllreduce")
    .Attr("T: " HVD_REDUCE_TYPES)
    .Attr("reduce_op: int")
    HVD_SCALES HVD_COLLECTIVE_ATTRS
    .Input("tensor: T")
    .Input("tensor_name: string")
    .Output("sum: T")
    .SetShapeFn(same_shapes)
    .Doc("Allreduce of `tensor` over the process set (reduce_op numbered as hvd.Average .. hvd.Adasum).");

REGISTER_OP("HvdGroupedAllreduce")
    .Attr("T: list(" HVD_REDUCE_TYPES ") >= 1")
    .Attr("reduce_op: int")
    HVD_SCALES HVD_COLLECTIVE_ATTRS
    .Input("tensors: T")
    .Input("tensor_name: string")
    .Output("sums: T")
    .SetShapeFn(same_shapes)
    .Doc("Allreduce of every tensor of the list as one negotiated, fused unit.");

REGISTER_OP("HvdAllgather")
    .Attr("T: " HVD_MOVE_TYPES)
    HVD_COLLECTIVE_ATTRS
    .Input("tensor: T")
    .Input("tensor_name: string")
    .Output("output: T")
    .SetShapeFn([](InferenceContext* c) { return first_dim_unknown(c, 1); })
    .Doc("Concatenation of every rank's `tensor` along the first dimension (which may differ).");

REGISTER_OP("HvdGroupedAllgather")
    .Attr("T: list(" HVD_MOVE_TYPES ") >= 1")
    HVD_COLLECTIVE_ATTRS
    .Input("tensors: T")
    .Input("tensor_name: string")
    .Output("outputs: T")
    .SetShapeFn(grouped_first_dim_unknown)
    .Doc("Allgather of every tensor of the list as one negotiated unit.");

REGISTER_OP("HvdBroadcast")
    .Attr("T: " HVD_MOVE_TYPES)
    .Attr("root_rank: int")
    HVD_COLLECTIVE_ATTRS
    .Input("tensor: T")
    .Input("tensor_name: string")
    .Output("output: T")
    .SetShapeFn(same_shapes)
    .Doc("`tensor` of rank root_rank (its rank in the process set), on every rank.");

REGISTER_OP("HvdAlltoall")
    .Attr("T: " HVD_MOVE_TYPES)
    HVD_COLLECTIVE_ATTRS
    .Input("tensor: T")
    .Input("splits: int32")
    .Input("tensor_name: string")
    .Output("output: T")
    .Output("received_splits: int32")
    .SetShapeFn([](InferenceContext* c) {
      TF_RETURN_IF_ERROR(first_dim_unknown(c, 1));
      c->set_output(1, c->Vector(c->UnknownDim()));
      return absl::OkStatus();
    })
    .Doc("Sends splits[r] first-dimension rows of `tensor` to rank r (empty splits: even).");

REGISTER_OP("HvdReducescatter")
    .Attr("T: " HVD_REDUCE_TYPES)
    .Attr("reduce_op: int")
    HVD_COLLECTIVE_ATTRS
    .Input("tensor: T")
    .Input("tensor_name: string")
    .Output("output: T")
    .SetShapeFn([](InferenceContext* c) { return first_dim_unknown(c, 1); })
    .Doc("This rank's share (along the first dimension) of the reduction of `tensor`.");

REGISTER_OP("HvdGroupedReducescatter")
    .Attr("T: list(" HVD_REDUCE_TYPES ") >= 1")
    .Attr("reduce_op: int")
    HVD_COLLECTIVE_ATTRS
    .Input("tensors: T")
    .Input("tensor_name: string")
    .Output("outputs: T")
    .SetShapeFn(grouped_first_dim_unknown)
    .Doc("Reducescatter of every tensor of the list as one negotiated unit.");

REGISTER_OP("HvdJoin")
    .Output("last_joined_rank: int32")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::ScalarShape)
    .Doc("Declares this rank out of data; ends when every rank joined (the last one's rank).");

REGISTER_OP("HvdBarrier")
    .Attr("process_set_id: int = 0")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::NoOutputs)
    .Doc("Ends when every rank of the process set reached it.");

REGISTER_OP("HvdQuery")
    .Attr("query: {'rank', 'size', 'local_rank', 'local_size'}")
    .Output("value: int32")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::ScalarShape)
    .Doc("The runtime's rank, size, local_rank or local_size when the op runs.");
