#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

#include "tilewave/error.h"
#include "tilewave/layer_set.h"

using namespace tilewave;
using nlohmann::json;

TEST_CASE("layer objects round-trip through JSON") {
  const char* lines[] = {
      R"({"op":"conv","N":8,"C":64,"H":56,"W":56,"K":128,"R":3,"S":3,"stride":[2,2],"pad":[1,1],"dilation":[1,1],"groups":1,"dtype":"fp16"})",
      R"({"op":"gemm","M":100,"N":200,"K":300,"batch":4,"dtype":"bf16"})",
      R"({"op":"eltwise","elems":1000,"inputs":2,"dtype":"fp32"})",
      R"({"op":"eltwise","elems":1000,"inputs":1,"strided":true,"dtype":"fp16"})",
      R"({"op":"pool","N":1,"C":64,"H":112,"W":112,"R":3,"S":3,"stride":[2,2],"pad":[1,1],"mode":"max","dtype":"fp16"})",
      R"({"op":"reduce","outer":2048,"inner":49,"dtype":"fp16"})",
      R"({"op":"softmax","outer":64,"inner":301056,"row_moments":true,"dtype":"fp32"})",
      R"({"op":"copy","elems_in":10,"elems_out":20,"dtype":"int8"})",
      R"({"op":"softmax","outer":4096,"inner":49,"warp_rows":true,"dtype":"fp16"})",
      R"({"op":"softmax","outer":4096,"inner":3137,"kept_inside":19,"dtype":"fp16"})",
      R"({"op":"attention","batch_heads":768,"q_len":197,"kv_len":197,"head_dim":64,"masked":true,"dtype":"fp16"})",
      R"({"op":"conv","N":8,"C":3,"H":224,"W":224,"K":192,"R":16,"S":16,"stride":[16,16],"nchw":true,"dtype":"fp16"})",
      R"({"op":"eltwise","elems":1000,"inputs":2,"unrolled":true,"dtype":"fp32"})",
      R"({"op":"eltwise","elems":1000,"inputs":1,"special_functions":2,"dtype":"fp16"})",
      R"({"op":"softmax","outer":4096,"inner":192,"layer_norm":true,"dtype":"fp32"})",
      R"({"op":"copy","elems_in":12845056,"elems_out":51380224,"resample_planes":262144,"dtype":"fp32"})",
      R"({"op":"copy","elems_in":12845056,"elems_out":51380224,"resample_kernel":"nearest_nhwc","dtype":"fp32"})"};
  for (const char* text : lines) {
    CAPTURE(text);
    const Layer l = layer_from_json(json::parse(text));
    const Layer again = layer_from_json(layer_to_json(l));
    CHECK(layer_to_json(again) == layer_to_json(l));
    CHECK(min_bytes(again) == min_bytes(l));
  }
  // Row moments write a mean and a 1/std per row, not the row.
  const Layer moments = layer_from_json(json::parse(lines[6]));
  CHECK(layer_to_json(moments).at("row_moments") == true);
  CHECK(std::get<MemoryProblem>(layer_from_json(json::parse(std::end(lines)[-3])).problem).layer_norm);
  CHECK(std::get<MemoryProblem>(layer_from_json(json::parse(std::end(lines)[-4])).problem).special_functions == 2);
  CHECK(std::get<MemoryProblem>(layer_from_json(json::parse(std::end(lines)[-2])).problem).resample_planes == 262144);
  CHECK(std::get<MemoryProblem>(layer_from_json(json::parse(std::end(lines)[-1])).problem).resample_kernel ==
        ResampleKernel::nearest_nhwc);
  CHECK(min_bytes(moments) == 64 * 301056 * 4 + 2 * 64 * 4);
  // A mask is kept; an attention without one writes no field.
  CHECK(std::get<AttentionProblem>(layer_from_json(json::parse(lines[10])).problem).masked);
  const json plain = json::parse(R"({"op":"attention","batch_heads":8,"q_len":49,"kv_len":49,"head_dim":32})");
  CHECK(!layer_to_json(layer_from_json(plain)).contains("masked"));
  // A conv run from NCHW memory says so; one from NHWC (a lone layer) writes no field.
  CHECK(std::get<ConvProblem>(layer_from_json(json::parse(lines[11])).problem).nchw);
  CHECK(!layer_to_json(layer_from_json(json::parse(lines[0]))).contains("nchw"));
}

TEST_CASE("bad layer objects name the field") {
  auto error = [](const char* text) {
    try {
      layer_from_json(json::parse(text));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error(R"({"op":"conv","N":1})").find("'C'") != std::string::npos);
  CHECK(error(R"({"op":"gemm","M":-1,"N":1,"K":1})").find("'M'") != std::string::npos);
  CHECK(error(R"({"op":"gemm","M":1,"N":1,"K":1,"dtype":"fp8"})").find("fp8") != std::string::npos);
  CHECK(error(R"({"op":"softmaxx","outer":1,"inner":1})").find("unknown op") != std::string::npos);
  CHECK(error(R"({"op":"softmax","outer":1,"inner":1,"row_moments":1})").find("'row_moments'") != std::string::npos);
  CHECK(error(R"({"op":"eltwise","elems":1,"strided":"yes"})").find("'strided'") != std::string::npos);
  CHECK(error(R"({"op":"eltwise","elems":1,"strided":true,"unrolled":true})").find("'unrolled'") != std::string::npos);
  CHECK(error(R"({"op":"softmax","outer":1,"inner":1,"warp_rows":"yes"})").find("'warp_rows'") != std::string::npos);
  CHECK(error(R"({"op":"eltwise","elems":1,"special_functions":0})").find("'special_functions'") != std::string::npos);
  CHECK(error(R"({"op":"eltwise","elems":1,"special_functions":1.5})").find("'special_functions'") != std::string::npos);
  CHECK(error(R"({"op":"copy","elems_in":4,"elems_out":16,"resample_planes":0})").find("'resample_planes'") != std::string::npos);
  CHECK(error(R"({"op":"copy","elems_in":4,"elems_out":16,"resample_planes":3})").find("'resample_planes'") != std::string::npos);
  for (const char* kind : {R"("bicubic")", R"("")", "3", "null", R"(["nearest_nchw"])", R"("none")"})
    CHECK(error((std::string(R"({"op":"copy","elems_in":4,"elems_out":16,"resample_kernel":)") + kind + "}").c_str())
              .find("'resample_kernel'") != std::string::npos);
  CHECK(error(R"({"op":"copy","elems_in":4,"elems_out":16,"resample_planes":4,"resample_kernel":"linear_nhwc"})")
            .find("both") != std::string::npos);
  // The warp path holds rows of at most 1,024 contiguous values.
  CHECK(error(R"({"op":"softmax","outer":1,"inner":1025,"warp_rows":true})").find("'warp_rows'") != std::string::npos);
  CHECK(error(R"({"op":"softmax","outer":1,"inner":8,"kept_inside":2,"warp_rows":true})").find("'warp_rows'") !=
        std::string::npos);
  CHECK(error(R"({"op":"conv","N":1,"C":6,"H":4,"W":4,"K":6,"R":3,"S":3,"groups":4})").find("groups") !=
        std::string::npos);
  CHECK(error(R"({"op":"conv","N":1,"C":8,"H":2,"W":2,"K":8,"R":5,"S":5})").find("window") != std::string::npos);
}

TEST_CASE("a bad line in a layer set is reported with its line number") {
  const std::string path = "test_layer_set_bad.jsonl";
  {
    std::ofstream f(path);
    f << "# comment\n{\"op\":\"gemm\",\"M\":1,\"N\":1,\"K\":1}\n\n{\"op\":\"gemm\",\"M\":1}\n";
  }
  CHECK_THROWS_WITH_AS(read_layer_set(path), (path + ":4: missing field 'N'").c_str(), InputError);
  {
    std::ofstream f(path);
    f << "{\"op\":\"gemm\",\"M\":1,\"N\":1,\"K\":1}\n{not json\n";
  }
  CHECK_THROWS_WITH_AS(read_layer_set(path), doctest::Contains((path + ":2: not valid JSON").c_str()), InputError);
  {  // l2_hit_bytes: at most the kernel's bytes (here 10 + 20 fp16 values)
    std::ofstream f(path);
    f << "{\"op\":\"copy\",\"elems_in\":10,\"elems_out\":20,\"l2_hit_bytes\":60}\n"
         "{\"op\":\"copy\",\"elems_in\":10,\"elems_out\":20,\"l2_hit_bytes\":61}\n";
  }
  CHECK_THROWS_WITH_AS(read_layer_set(path), doctest::Contains((path + ":2: field 'l2_hit_bytes'").c_str()), InputError);
  std::remove(path.c_str());
}

TEST_CASE("layer sets: a cast's input_dtype survives the round trip and sets its bytes") {
  const Layer l = layer_from_json(nlohmann::json::parse(R"({"op":"eltwise","elems":1000,"inputs":1,"dtype":"fp16","input_dtype":"fp32"})"));
  REQUIRE(l.input_dtype == DType::fp32);
  CHECK(min_bytes(l) == 1000 * 4 + 1000 * 2);
  CHECK(layer_to_json(l).at("input_dtype") == "fp32");
  CHECK_THROWS_AS(layer_from_json(nlohmann::json::parse(R"({"op":"eltwise","elems":1,"input_dtype":"fp64"})")),
                  std::invalid_argument);
}
