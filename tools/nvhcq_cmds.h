/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_cmds.h - subcommands of the nvhcq CLI. Each lives in its own tools/nvhcq_<x>.c;
 * the dispatcher declares them weak so the CLI builds while a subcommand is missing.
 */
#ifndef NVHCQ_CMDS_H
#define NVHCQ_CMDS_H

int nvhcq_cmd_info(int argc, char **argv);
int nvhcq_cmd_devices(int argc, char **argv);
int nvhcq_cmd_demo(int argc, char **argv);
int nvhcq_cmd_bench(int argc, char **argv);
int nvhcq_cmd_run(int argc, char **argv);
int nvhcq_cmd_llm_bench(int argc, char **argv);
int nvhcq_cmd_gen_model(int argc, char **argv);
int nvhcq_cmd_tokenize(int argc, char **argv);
int nvhcq_cmd_perplexity(int argc, char **argv);
int nvhcq_cmd_selftest(int argc, char **argv);
int nvhcq_cmd_dmesg_check(int argc, char **argv);
int nvhcq_cmd_serve(int argc, char **argv);
int nvhcq_cmd_chat(int argc, char **argv);

#endif
