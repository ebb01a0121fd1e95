"""hvd.tensorflow's gradients and training helpers on every rank, against numpy references:
the gradient of each collective (tf.GradientTape, eagerly and in tf.function, with
rank-dependent output gradients), DistributedGradientTape (dense, IndexedSlices,
sparse_as_dense, groups, fp16 compression, predivide, local sources), hvd.keras's
DistributedOptimizer (and the partial one) in a custom loop, SyncBatchNormalization against
BatchNormalization on the concatenated batch, the tf.compat.v1 DistributedOptimizer in a graph,
broadcast_variables and the object collectives."""
import sys

import numpy as np

from checks_base import run_all
from tf_harness import Checks, tf

import hvd.tensorflow as hvd


def grad_of(fn, x, g, mode):
    """d<fn(x), g>/dx, eagerly or in a tf.function."""
    def body(x, g):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        return tape.gradient(y, x, output_gradients=g)
    return (tf.function(body) if mode == "tf.function" else body)(x, g)


def collective_grad_checks(c, r, p):
    gs = [np.arange(6, dtype=np.float64).reshape(3, 2) * (q + 1) for q in range(p)]
    x = tf.ones([3, 2], tf.float64)
    g = tf.constant(gs[r])
    for mode in ("eager", "tf.function"):
        c.close(grad_of(lambda t: hvd.allreduce(t, op=hvd.Sum), x, g, mode), sum(gs), f"{mode} allreduce Sum grad")
        c.close(grad_of(lambda t: hvd.allreduce(t), x, g, mode), sum(gs) / p, f"{mode} allreduce Average grad")
        c.close(grad_of(lambda t: hvd.grouped_allreduce([t, 2 * t], op=hvd.Sum)[1], x, g, mode), 2 * sum(gs),
                f"{mode} grouped_allreduce grad")
        c.close(grad_of(lambda t: hvd.broadcast(t, p - 1), x, g, mode),
                sum(gs) / p if r == p - 1 else np.zeros((3, 2)), f"{mode} broadcast grad")
        c.close(grad_of(lambda t: hvd.reducescatter(t, op=hvd.Sum), tf.ones([2 * p, 2], tf.float64),
                        tf.constant(np.full((2, 2), r + 1.0)), mode),
                np.repeat(np.arange(1.0, p + 1), 2)[:, None] * np.ones((1, 2)), f"{mode} reducescatter Sum grad")
        c.close(grad_of(lambda t: hvd.reducescatter(t), tf.ones([p, 1], tf.float64), tf.constant([[1.0 * p]], tf.float64), mode),
                np.ones((p, 1)), f"{mode} reducescatter Average grad")
    allg = [np.arange(sum(q + 1 for q in range(p)), dtype=np.float64) * (q + 1) for q in range(p)]
    mean = sum(allg) / p
    off = sum(q + 1 for q in range(r))
    for mode in ("eager", "tf.function"):
        c.close(grad_of(lambda t: hvd.allgather(t), tf.ones([r + 1], tf.float64), tf.constant(allg[r]), mode),
                mean[off:off + r + 1], f"{mode} allgather grad (this rank's rows of the average)")
        splits = tf.constant([1 + (q + r) % 2 for q in range(p)], tf.int32)
        xs = tf.ones([int(tf.reduce_sum(splits))], tf.float64)
        received = [1 + (r + q) % 2 for q in range(p)]
        gvec = tf.constant(np.concatenate([np.full(n, 10.0 * q + r) for q, n in enumerate(received)]))
        want = np.concatenate([np.full(1 + (q + r) % 2, 10.0 * r + q) for q in range(p)])
        c.close(grad_of(lambda t: hvd.alltoall(t, splits=splits)[0], xs, gvec, mode), want,
                f"{mode} alltoall grad (sent back)")


def data(r, n=4):
    rng = np.random.default_rng(100 + r)
    return rng.normal(size=(n, 3)).astype(np.float32), rng.normal(size=(n, 2)).astype(np.float32)


def tape_checks(c, r, p):
    """DistributedGradientTape's gradients are the average of every rank's local ones."""
    w0 = np.arange(6, dtype=np.float32).reshape(3, 2) / 10
    emb0 = np.arange(10, dtype=np.float32).reshape(5, 2) / 10

    def local_grads(q):
        x, y = data(q)
        w, e = tf.Variable(w0), tf.Variable(emb0)
        with tf.GradientTape() as t:
            loss = tf.reduce_mean((x @ w - y) ** 2) + tf.reduce_sum(tf.gather(e, [q % 5, 1]))
        return [tf.convert_to_tensor(v).numpy() for v in t.gradient(loss, [w, e])]
    mean = [sum(local_grads(q)[k] for q in range(p)) / p for k in range(2)]
    x, y = data(r)
    w, e = tf.Variable(w0), tf.Variable(emb0)
    for mode in ("eager", "tf.function"):
        for kw in ({}, {"sparse_as_dense": True}, {"groups": 2}, {"compression": hvd.Compression.fp16},
                   {"gradient_predivide_factor": 2.0, "sparse_as_dense": True}):
            def step():
                with tf.GradientTape() as t:
                    loss = tf.reduce_mean((x @ w - y) ** 2) + tf.reduce_sum(tf.gather(e, [r % 5, 1]))
                return hvd.DistributedGradientTape(t, **kw).gradient(loss, [w, e])
            gw, ge = (tf.function(step) if mode == "tf.function" else step)()
            tol = 2e-3 if "compression" in kw else 1e-5
            c.close(gw, mean[0], f"{mode} DistributedGradientTape {kw} dense", tol, tol)
            c.ok(isinstance(ge, tf.IndexedSlices) != bool(kw.get("sparse_as_dense")), f"{mode} {kw} sparse kind")
            c.close(tf.convert_to_tensor(ge), mean[1], f"{mode} DistributedGradientTape {kw} IndexedSlices", tol, tol)
    with tf.GradientTape() as t:
        loss = tf.reduce_sum(w * (r + 1))
    dt = hvd.DistributedGradientTape(t)
    dt.register_local_source(w)
    c.close(dt.gradient(loss, [w])[0], np.full((3, 2), (r + 1) / p, np.float32), "a local source: own gradient / size")


def keras_loop_checks(c, r, p):
    """hvd.keras.DistributedOptimizer in a custom loop: every rank applies the average."""
    import keras
    import hvd.keras as hk
    v = keras.Variable(np.zeros(3, np.float32))
    opt = hk.DistributedOptimizer(keras.optimizers.SGD(learning_rate=0.5))
    c.ok(type(opt).__name__ == "SGD" and isinstance(opt, keras.optimizers.SGD), "wrapped class keeps its name")
    grads = [tf.constant([1.0, 2.0, 3.0]) * (r + 1)]
    opt.apply(grads, [v])
    tf.function(lambda: opt.apply_gradients(zip(grads, [v])))()
    mean = np.array([1.0, 2.0, 3.0]) * sum(q + 1 for q in range(p)) / p
    c.close(v.value, (-0.5 * 2 * mean).astype(np.float32), "keras DistributedOptimizer apply / apply_gradients")
    acc = hk.DistributedOptimizer(keras.optimizers.SGD(learning_rate=1.0), backward_passes_per_step=2)
    u = keras.Variable(np.zeros(1, np.float32))
    for k in range(2):
        acc.apply([tf.constant([float(r + k)])], [u])
    c.close(u.value, np.array([-(sum(range(p)) * 2 + p) / p], np.float32),
            "backward_passes_per_step=2 applies the sum of two averaged steps")
    layer = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros")
    layer.build((None, 1))
    part = hk.PartialDistributedOptimizer(keras.optimizers.SGD(learning_rate=1.0), local_layers=[layer])
    shared = keras.Variable(np.zeros(1, np.float32))
    part.apply([tf.constant([[float(r)]]), tf.constant([float(r)])], [layer.kernel, shared])
    c.close(layer.kernel.value, np.array([[-float(r) / p]], np.float32), "PartialDistributedOptimizer: local / size")
    c.close(shared.value, np.array([-sum(range(p)) / p], np.float32), "PartialDistributedOptimizer: shared averaged")


def keras_fit_checks(c, r, p):
    """model.fit with the elastic state callbacks (outside elastic mode a commit only saves)
    and BestModelCheckpoint, which writes on rank 0 only."""
    import os
    import tempfile
    import keras
    import hvd.keras as hk
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer=hk.DistributedOptimizer(keras.optimizers.SGD(0.1)), loss="mse", jit_compile=False)
    state = hk.elastic.KerasState(model, epoch=0, batch=0)
    commits = []
    state.register_reset_callbacks([])
    save = state.save
    state.save = lambda: (commits.append(1), save())
    path = os.path.join(tempfile.mkdtemp(), f"best.r{r}.keras")
    x = np.ones((8, 2), np.float32) * (r + 1)
    model.fit(x, x[:, :1], batch_size=4, epochs=2, verbose=0, validation_data=(x, x[:, :1]),
              callbacks=[hk.elastic.CommitStateCallback(state, batches_per_commit=2),
                         hk.elastic.UpdateBatchStateCallback(state), hk.elastic.UpdateEpochStateCallback(state),
                         hk.callbacks.BestModelCheckpoint(path)])
    c.ok(state.epoch == 2 and state.batch == 0 and len(commits) == 4,
         f"elastic callbacks: epoch {state.epoch}, batch {state.batch}, {len(commits)} commits (want 2, 0, 4)")
    c.ok(os.path.exists(path) == (r == 0), f"BestModelCheckpoint wrote on rank {r}: {os.path.exists(path)}")


def sync_bn_checks(c, r, p):
    """SyncBatchNormalization on uneven per-rank batches equals BatchNormalization on the
    concatenated batch: outputs, input gradients, gamma/beta gradients (summed over the
    ranks) and moving statistics."""
    import keras
    rows = [2 + q for q in range(p)]
    xs = [(np.random.default_rng(q).normal(size=(rows[q], 3)) * (q + 1)).astype(np.float32) for q in range(p)]
    full, off = np.concatenate(xs), sum(rows[:r])
    w = np.arange(full.size, dtype=np.float32).reshape(full.shape) / 10

    def run(layer, x, wx):
        layer.build((None, 3))
        x = tf.constant(x)
        with tf.GradientTape() as t:
            t.watch(x)
            loss = tf.reduce_sum(layer(x, training=True) * wx)
        return [layer(x, training=False)] + t.gradient(loss, [x, layer.gamma, layer.beta])
    mine = run(hvd.SyncBatchNormalization(momentum=0.5), xs[r], w[off:off + rows[r]])
    ref = run(keras.layers.BatchNormalization(momentum=0.5), full, w)
    c.close(mine[0], ref[0].numpy()[off:off + rows[r]], "SyncBatchNormalization output (moving statistics)", 1e-4, 1e-5)
    c.close(mine[1], ref[1].numpy()[off:off + rows[r]], "SyncBatchNormalization input gradient", 1e-4, 1e-5)
    for k, what in ((2, "gamma"), (3, "beta")):
        c.close(hvd.allreduce(mine[k], op=hvd.Sum), ref[k], f"SyncBatchNormalization {what} gradient", 1e-4, 1e-5)


def v1_checks(c, r, p):
    """The tf.compat.v1 DistributedOptimizer averages compute_gradients() in a graph."""
    g = tf.Graph()
    with g.as_default():
        w = tf.compat.v1.get_variable("w", initializer=tf.constant([1.0, 1.0]))
        loss = tf.reduce_sum(w * tf.constant([float(r), 1.0 + r]))
        opt = hvd.DistributedOptimizer(tf.compat.v1.train.GradientDescentOptimizer(1.0))
        gv = opt.compute_gradients(loss, [w])
        train = opt.apply_gradients(gv)
        bcast = hvd.broadcast_global_variables(0)
        with tf.compat.v1.Session(graph=g) as s:
            s.run(tf.compat.v1.global_variables_initializer())
            s.run(bcast)
            s.run(train)
            got = s.run(w)
            obj = hvd.broadcast_object({"r": r} if r == 0 else None, 0, session=s)
    mean = np.array([sum(range(p)), sum(range(1, p + 1))]) / p
    c.close(got, (1.0 - mean).astype(np.float32), "tf.compat.v1 DistributedOptimizer step")
    c.ok(obj == {"r": 0}, f"broadcast_object in a session: {obj}")


def helper_checks(c, r, p):
    v = [tf.Variable(np.full(3, float(r))), tf.Variable([[r, r + 1]])]
    hvd.broadcast_variables(v, root_rank=p - 1)
    c.close(v[0], np.full(3, float(p - 1)), "broadcast_variables (float)")
    c.close(v[1], np.array([[p - 1, p]], np.int32), "broadcast_variables (int)")
    got = hvd.broadcast_object({"epoch": 3} if r == 0 else None, root_rank=0)
    c.ok(got == {"epoch": 3}, f"broadcast_object: {got}")
    c.ok(hvd.allgather_object(("rank", r)) == [("rank", q) for q in range(p)], "allgather_object")
    s = tf.IndexedSlices(tf.fill([1, 2], float(r)), tf.constant([r]), dense_shape=tf.constant([p, 2]))
    red = hvd.allreduce(s, op=hvd.Sum)
    c.ok(isinstance(red, tf.IndexedSlices), "allreduce of IndexedSlices stays IndexedSlices")
    c.close(tf.convert_to_tensor(red), np.repeat(np.arange(p, dtype=np.float32)[:, None], 2, 1),
            "allreduce of IndexedSlices (by allgathers)")


def main():
    return run_all(Checks("tf_grad_test"), hvd.init,
                   (collective_grad_checks, tape_checks, keras_loop_checks, keras_fit_checks, sync_bn_checks,
                    v1_checks, helper_checks))


if __name__ == "__main__":
    sys.exit(main())
