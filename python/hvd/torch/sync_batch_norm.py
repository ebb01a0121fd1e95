"""hvd.SyncBatchNorm (Horovod's horovod.torch.SyncBatchNorm): batch normalization whose
statistics are those of the batch of all ranks together.

In training, every rank computes its batch's mean and inverse standard deviation per
channel and its element count; they are allgathered and combined (weighted by the counts,
so per-rank batch sizes may differ) into the global mean and variance, which normalize
the local batch and update the running statistics (unbiased variance over the global
count). Backward allreduces (Sum) the per-channel sums of the output gradient and of the
gradient times the centered input, so every rank's input gradient is its slice of the
input gradient of BatchNorm over the concatenated batch. The weight and bias gradients
stay local, as in Horovod: their sum over the ranks (what DistributedOptimizer's Sum, or
its Average times the size, gives) is the concatenated batch's. In eval mode, or on one
rank, it is plain BatchNorm.
"""
import torch
import torch.nn.functional as F
from torch.nn.modules.batchnorm import _BatchNorm

from hvd.torch import mpi_ops
from hvd.torch.mpi_ops import Sum


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over the batch of all ranks; inputs (N, C, ...) with at least 2 dims."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"hvd.SyncBatchNorm: expected at least 2D input (N, C, ...), got "
                             f"{input.dim()}D input")

    def _momentum(self):
        """The running-statistics factor of this step (None momentum: cumulative average)."""
        if not (self.training and self.track_running_stats):
            return 0.0 if self.momentum is None else self.momentum
        self.num_batches_tracked.add_(1)
        if self.momentum is None:
            return 1.0 / float(self.num_batches_tracked)
        return self.momentum

    def forward(self, input):
        self._check_input_dim(input)
        momentum = self._momentum()
        if not self.training or mpi_ops.size() == 1:
            use_batch = self.training or not self.track_running_stats
            return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                                use_batch, momentum, self.eps)
        return _SyncBatchNormFn.apply(input, self.weight, self.bias, self.running_mean,
                                      self.running_var, self.eps, momentum)


def _per_channel(t, dims):
    """(1, C, 1, ...) view of a per-channel vector, to broadcast against an input."""
    return t.view([1, -1] + [1] * (dims - 2))


class _SyncBatchNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum):
        channels, dims = input.shape[1], input.dim()
        axes = [0] + list(range(2, dims))
        count = input.numel() // channels
        x = input.detach().to(torch.float64)
        if count > 0:
            mean = x.mean(axes)
            var = x.var(axes, unbiased=False)
        else:  # an empty batch adds nothing (its count is 0)
            mean = var = torch.zeros(channels, dtype=torch.float64)
        # One allgather of [count, mean, biased var] per rank; combined weighted by counts.
        row = torch.cat([torch.tensor([float(count)], dtype=torch.float64), mean, var]).unsqueeze(0)
        rows = mpi_ops.allgather(row)
        counts, means, vars_ = rows[:, :1], rows[:, 1:1 + channels], rows[:, 1 + channels:]
        total = float(counts.sum())
        if total <= 1:
            raise ValueError(f"hvd.SyncBatchNorm: expected more than 1 value per channel in "
                             f"training over all ranks, got {int(total)}")
        g_mean = (counts * means).sum(0) / total
        g_var = (counts * (vars_ + (means - g_mean) ** 2)).sum(0) / total
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(momentum * g_mean.to(running_mean.dtype))
            running_var.mul_(1 - momentum).add_(momentum * (g_var * total / (total - 1)).to(running_var.dtype))
        invstd = (g_var + eps).rsqrt()
        ctx.total = total
        ctx.save_for_backward(input, weight, g_mean.to(input.dtype), invstd.to(input.dtype))
        out = (input - _per_channel(g_mean.to(input.dtype), dims)) * _per_channel(invstd.to(input.dtype), dims)
        if weight is not None:
            out = out * _per_channel(weight.detach(), dims) + _per_channel(bias.detach(), dims)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, mean, invstd = ctx.saved_tensors
        dims = input.dim()
        axes = [0] + list(range(2, dims))
        xmu = input - _per_channel(mean, dims)
        sum_dy = grad_output.sum(axes)
        sum_dy_xmu = (grad_output * xmu).sum(axes)
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            # Every rank joins this allreduce (needs_input_grad is the same on all ranks).
            both = mpi_ops.allreduce(torch.stack([sum_dy, sum_dy_xmu]), op=Sum)
            scale = invstd if weight is None else invstd * weight
            mean_dy = _per_channel(both[0] / ctx.total, dims)
            mean_dy_xmu = _per_channel(both[1] / ctx.total, dims)
            grad_input = _per_channel(scale, dims) * (
                grad_output - mean_dy - xmu * _per_channel(invstd * invstd, dims) * mean_dy_xmu)
        if weight is not None and ctx.needs_input_grad[1]:
            grad_weight = sum_dy_xmu * invstd
        if weight is not None and ctx.needs_input_grad[2]:
            grad_bias = sum_dy
        return grad_input, grad_weight, grad_bias, None, None, None, None
