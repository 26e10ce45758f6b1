#include "predefined.h"

extern "C" {
mcl_mpi_predefined ompi_mpi_comm_world = {"MPI_COMM_WORLD"};
mcl_mpi_predefined ompi_mpi_op_sum = {"MPI_SUM"};
mcl_mpi_predefined ompi_mpi_op_max = {"MPI_MAX"};
mcl_mpi_predefined ompi_mpi_op_min = {"MPI_MIN"};
mcl_mpi_predefined ompi_mpi_c_bool = {"MPI_C_BOOL"};
mcl_mpi_predefined ompi_mpi_int8_t = {"MPI_INT8_T"};
mcl_mpi_predefined ompi_mpi_uint8_t = {"MPI_UINT8_T"};
mcl_mpi_predefined ompi_mpi_int16_t = {"MPI_INT16_T"};
mcl_mpi_predefined ompi_mpi_uint16_t = {"MPI_UINT16_T"};
mcl_mpi_predefined ompi_mpi_int32_t = {"MPI_INT32_T"};
mcl_mpi_predefined ompi_mpi_uint32_t = {"MPI_UINT32_T"};
mcl_mpi_predefined ompi_mpi_int64_t = {"MPI_INT64_T"};
mcl_mpi_predefined ompi_mpi_uint64_t = {"MPI_UINT64_T"};
mcl_mpi_predefined ompi_mpi_float = {"MPI_FLOAT"};
mcl_mpi_predefined ompi_mpi_double = {"MPI_DOUBLE"};
mcl_mpi_predefined ompi_mpi_c_complex = {"MPI_C_COMPLEX"};
}
