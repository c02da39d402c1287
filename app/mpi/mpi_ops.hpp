// The MPI calls `tiersim sweep` makes under mpirun, as a small ops table (in the manner of fio's
// ioengine ops). The table lives in a separate module, tiersim-mpi.so, built beside the program
// and loaded with dlopen only when tiersim runs under an MPI launcher: linking Open MPI into the
// program itself added nine shared libraries and several milliseconds to every start of every
// command, while only `sweep` under mpirun uses it.
//
// Plain C types only: the module and the program agree on this struct and nothing else.
#pragma once

extern "C" {

// Bumped whenever the struct changes; the program refuses a module of another version.
#define TIERSIM_MPI_OPS_VERSION 1

struct TiersimMpiOps {
  int version;  // TIERSIM_MPI_OPS_VERSION
  // MPI_Init_thread(FUNNELED); fills this process's rank and the number of ranks.
  void (*init)(int* rank, int* size);
  // Root's *len and then its len bytes go to every rank; others receive into `data`, which
  // holds at least *len bytes (call with data == nullptr first to learn the length).
  void (*bcast_length)(unsigned long long* len, int root);
  void (*bcast_bytes)(char* data, int len, int root);
  void (*send)(const char* data, int len, int dest, int tag);
  // Non-blocking probe: 1 and the message's source, tag and length when one is waiting.
  int (*probe)(int* source, int* tag, int* len);
  void (*recv)(char* data, int len, int source, int tag);
  void (*abort_all)(int code);
  void (*finalize)();
};

// Exported by the module under this name.
const TiersimMpiOps* tiersim_mpi_ops();
}
