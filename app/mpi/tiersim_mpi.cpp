// tiersim-mpi.so: Open MPI behind the ops table of app/mpi/mpi_ops.hpp, loaded by `tiersim sweep`
// under mpirun. It holds no tiersim code; every call is one MPI call on MPI_COMM_WORLD.
#include <mpi.h>

#include "app/mpi/mpi_ops.hpp"

namespace {

void init(int* rank, int* size) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

void bcast_length(unsigned long long* len, int root) {
  MPI_Bcast(len, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD);
}

void bcast_bytes(char* data, int len, int root) {
  MPI_Bcast(data, len, MPI_CHAR, root, MPI_COMM_WORLD);
}

void send(const char* data, int len, int dest, int tag) {
  MPI_Send(data, len, MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

int probe(int* source, int* tag, int* len) {
  int flag = 0;
  MPI_Status st;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
  if (!flag) return 0;
  *source = st.MPI_SOURCE;
  *tag = st.MPI_TAG;
  MPI_Get_count(&st, MPI_CHAR, len);
  return 1;
}

void recv(char* data, int len, int source, int tag) {
  MPI_Recv(data, len, MPI_CHAR, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void abort_all(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
}

void finalize() {
  MPI_Finalize();
}

const TiersimMpiOps kOps = {TIERSIM_MPI_OPS_VERSION,
                            init,
                            bcast_length,
                            bcast_bytes,
                            send,
                            probe,
                            recv,
                            abort_all,
                            finalize};

}  // namespace

extern "C" __attribute__((visibility("default"))) const TiersimMpiOps* tiersim_mpi_ops() {
  return &kOps;
}
