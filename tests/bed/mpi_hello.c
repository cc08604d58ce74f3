// SPDX-License-Identifier: Apache-2.0
// MPI test program for the e2e bed: each rank prints rank, size and hostname;
// an Allreduce checks the sum.
//
// Output, one line per rank (greppable):
//   mpi_hello rank=R size=S host=HOSTNAME allreduce=SUM expect=EXPECTED ok|BAD
// Options: --sleep SECONDS  keep running after the check (for signal tests),
// printing "mpi_hello sleeping". Exit status: 0 when the Allreduce result is
// right on every rank, 1 otherwise.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) strcpy(host, "?");

  // Sum of (rank + 1) over all ranks: size * (size + 1) / 2.
  long mine = rank + 1;
  long sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  long expect = (long)size * (size + 1) / 2;
  int ok = sum == expect;
  printf("mpi_hello rank=%d size=%d host=%s allreduce=%ld expect=%ld %s\n",
         rank, size, host, sum, expect, ok ? "ok" : "BAD");
  fflush(stdout);

  // Everyone agrees on the verdict before anyone exits.
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);

  int sleep_s = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], "--sleep") == 0) sleep_s = atoi(argv[i + 1]);
  }
  if (sleep_s > 0) {
    printf("mpi_hello rank=%d sleeping %d\n", rank, sleep_s);
    fflush(stdout);
    sleep((unsigned)sleep_s);
  }
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
