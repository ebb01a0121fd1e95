// The Open MPI backend: a Transport over an MPI communicator, with MPI's own collectives
// as the "native" algorithms.
#pragma once

#include <memory>

#include "hvd/status.h"
#include "hvd/transport.h"

namespace hvd {

/// Initializes MPI (thread level >= SERIALIZED) unless the application already did;
/// finalize_mpi() finalizes only what this call initialized.
Status init_mpi(int* argc, char*** argv);
/// Finalizes MPI if init_mpi() initialized it.
void finalize_mpi();
/// MPI_Finalize waits for every rank, so with a peer that stalled or died it would block
/// until the missing one comes back. With `timeout_s` > 0 this first waits up to that long
/// for every rank of MPI_COMM_WORLD to get here (a non-blocking barrier); if one does not,
/// it returns false at once and MPI is finalized when the process exits (on the main
/// thread). `timeout_s` <= 0: finalize_mpi(). Does nothing unless init_mpi() initialized MPI.
bool finalize_mpi_within(double timeout_s);
/// A Transport over MPI_COMM_WORLD (nodes = ranks sharing memory).
/// `ranks_per_node` > 0 (knob ranks_per_node): every k consecutive ranks of a host are one
/// node, for a multi-node layout on one host; 0: the hosts (shared memory) are the nodes.
std::unique_ptr<Transport> make_mpi_world_transport(int64_t ranks_per_node = 0);
/// Aborts the MPI job (all processes) with `code`.
[[noreturn]] void abort_mpi(int code);

}  // namespace hvd
