// tilewave: the CLI (driver.h), its whole work in the tilewave_cli library.
#include "driver.h"

int main(int argc, char** argv) { return tilewave::cli::run(argc, argv); }
