/* Where the tests find the programs they run: the Makefile passes its build folder and, for a
   cross build, the emulator that runs them (e.g. qemu-aarch64-static). */
#ifndef SWA_TEST_PROGRAMS_H
#define SWA_TEST_PROGRAMS_H
#ifndef SWA_TEST_BIN
#define SWA_TEST_BIN "build/"
#endif
#ifndef SWA_TEST_RUN
#define SWA_TEST_RUN ""
#endif
#define PROGRAM_FILE(name) SWA_TEST_BIN name                  /* for access() */
#define PROGRAM(name) SWA_TEST_RUN SWA_TEST_BIN name          /* to start in a command */
#endif
