# Writes `tilewave --help` and every subcommand's --help into one text file
# (the installed manual): cmake -DTILEWAVE=... -DOUT=... -P write_help.cmake
set(text "")
foreach(cmd "" analyze layers rank sweep nas nas-merge gpus ops calibrate "calibrate fit" "calibrate fit-networks"
        "calibrate fit-runtime" "calibrate carry" "calibrate validate")
  separate_arguments(args UNIX_COMMAND "${cmd}")
  execute_process(COMMAND ${TILEWAVE} ${args} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tilewave ${cmd} --help failed")
  endif()
  string(APPEND text "==== tilewave ${cmd}\n\n${help}\n")
endforeach()
file(WRITE ${OUT} "${text}")
