// The objects whose addresses are Open MPI's predefined handles: MLX looks
// each up by name (dlsym) and passes its address back as MPI_COMM_WORLD,
// MPI_SUM, MPI_FLOAT and so on. Only the address counts; each holds its MPI
// name, for messages.
#pragma once

#define MCL_MPI_EXPORT __attribute__((visibility("default")))

struct mcl_mpi_predefined {
  const char* name;
};

extern "C" {
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_comm_world;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_op_sum;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_op_max;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_op_min;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_c_bool;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_int8_t;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_uint8_t;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_int16_t;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_uint16_t;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_int32_t;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_uint32_t;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_int64_t;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_uint64_t;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_float;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_double;
MCL_MPI_EXPORT extern mcl_mpi_predefined ompi_mpi_c_complex;
}
