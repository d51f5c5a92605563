// Tests of the torch-free data file readers: ReadNpyFile on .npy files built from byte strings and
// written by numpy, Hdf5ArrayFile on files written by h5py, LoadArrayDataset on both layouts, and
// CheckClassLabels / CheckRegressionTargets. Every refusal is BadInput naming the file and the
// array. The numpy and h5py tests run Debian's /usr/bin/python3 and skip without it.

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tasks/torchscript/array_dataset.hpp"
#include "tasks/torchscript/hdf5_arrays.hpp"
#include "tasks/torchscript/npy_file.hpp"
#include "tasks/torchscript/numeric_array.hpp"

namespace hpo {
namespace {

const char kPython[] = "/usr/bin/python3";

// True when Debian's interpreter can import numpy and h5py (checked once).
bool HaveNumpyAndH5py() {
  static const bool have =
      access(kPython, X_OK) == 0 &&
      std::system((std::string(kPython) + " -c 'import numpy, h5py' >/dev/null 2>&1").c_str()) == 0;
  return have;
}

// The bytes of `values` as stored in memory (little-endian on every host this project runs on).
template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), values.begin(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> Values(const NumericArray& array) {
  std::vector<T> values(array.bytes.size() / sizeof(T));
  std::memcpy(values.data(), array.bytes.data(), array.bytes.size());
  return values;
}

// A .npy file as numpy writes it: magic, version, header length, the header dictionary padded
// with spaces and a final '\n' to a multiple of 64 bytes, then `data`.
std::string NpyFile(const std::string& dictionary, const std::string& data, int major = 1) {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string header = dictionary;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string file = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  for (size_t byte = 0; byte < preamble - 8; ++byte) {
    file += static_cast<char>((header.size() >> (8 * byte)) & 0xff);
  }
  return file + header + data;
}

// numpy's header dictionary for a C-order array.
std::string Dictionary(const std::string& descr, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Expects `status` to be BadInput with a message that holds every one of `parts`.
void ExpectBadInput(const Status& status, std::initializer_list<std::string> parts) {
  EXPECT_EQ(status.code(), Status::Code::kBadInput) << status.message();
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << "'" << part << "' is not in: " << status.message();
  }
}

// Gives each test a temporary folder, removed afterwards.
class TempDirTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "hpo_arrays_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }

  // Writes PathOf(name) as a .npy file of `descr` and `shape` holding `data`.
  void WriteNpy(const std::string& name, const std::string& descr, const std::string& shape,
                const std::string& data) {
    WriteFile(PathOf(name), NpyFile(Dictionary(descr, shape), data));
  }

  // Runs `script` with /usr/bin/python3 in the temporary folder; true when it exits 0.
  bool RunPython(const std::string& script) const {
    std::ofstream(PathOf("make_files.py")) << script;
    const std::string command = "cd '" + dir_ + "' && " + kPython + " make_files.py";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  std::string dir_;
};

TEST(NumericArrayTest, NamesSizesClassesAndShapes) {
  EXPECT_STREQ(ElementTypeName(ElementType::kFloat32), "float32");
  EXPECT_STREQ(ElementTypeName(ElementType::kUInt8), "uint8");
  EXPECT_STREQ(ElementTypeName(ElementType::kBool), "bool");
  EXPECT_EQ(ElementSize(ElementType::kFloat64), 8u);
  EXPECT_EQ(ElementSize(ElementType::kInt16), 2u);
  EXPECT_EQ(ElementSize(ElementType::kBool), 1u);
  EXPECT_TRUE(IsFloating(ElementType::kFloat32));
  EXPECT_FALSE(IsFloating(ElementType::kInt64));
  EXPECT_FALSE(IsFloating(ElementType::kBool));
  EXPECT_EQ(ShapeString({60000, 28, 28}), "(60000, 28, 28)");
  EXPECT_EQ(ShapeString({5}), "(5,)");
  EXPECT_EQ(ShapeString({}), "()");

  NumericArray array;
  array.shape = {4, 3, 2};
  EXPECT_EQ(array.samples(), 4);
  EXPECT_EQ(array.elements(), 24);
}

TEST(NumericArrayTest, AlignsArrayBytesAndKeepsThemOnResize) {
  ArrayBytes small(10);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % 64, 0u);
  ArrayBytes large(5 << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % (2 << 20), 0u);
  for (size_t i = 0; i < small.size(); ++i) small[i] = static_cast<unsigned char>(i);
  small.resize(1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % 64, 0u);
  EXPECT_EQ(small[9], 9);
  ArrayBytes moved = std::move(small);
  EXPECT_EQ(moved.size(), 1000u);
}

using NpyFileTest = TempDirTest;

TEST_F(NpyFileTest, ReadsVersion1ThreeDimensionalFloat32) {
  std::string data;
  for (int i = 0; i < 24; ++i) data += Bytes<float>({i * 0.5f});
  WriteNpy("x.npy", "<f4", "(2, 3, 4)", data);

  NumericArray array;
  const Status status = ReadNpyFile(PathOf("x.npy"), &array);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(array.type, ElementType::kFloat32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(array.samples(), 2);
  const std::vector<float> values = Values<float>(array);
  ASSERT_EQ(values.size(), 24u);
  EXPECT_EQ(values[0], 0.0f);
  EXPECT_EQ(values[23], 11.5f);
}

TEST_F(NpyFileTest, ReadsVersion2And3Headers) {
  for (int major : {2, 3}) {
    SCOPED_TRACE(major);
    WriteFile(PathOf("y.npy"),
              NpyFile(Dictionary("<i8", "(3,)"), Bytes<int64_t>({7, -1, 1LL << 40}), major));
    NumericArray array;
    const Status status = ReadNpyFile(PathOf("y.npy"), &array);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(array.type, ElementType::kInt64);
    EXPECT_EQ(array.shape, (std::vector<int64_t>{3}));
    EXPECT_EQ(Values<int64_t>(array), (std::vector<int64_t>{7, -1, 1LL << 40}));
  }
}

TEST_F(NpyFileTest, ReadsEveryElementType) {
  struct Case {
    std::string descr;
    std::string data;
    ElementType type;
  };
  const Case cases[] = {
      {"<f8", Bytes<double>({1e300, -0.25}), ElementType::kFloat64},
      {"|i1", Bytes<int8_t>({-128, 127}), ElementType::kInt8},
      {"|u1", Bytes<uint8_t>({0, 255}), ElementType::kUInt8},
      {"<i2", Bytes<int16_t>({-32768, 32767}), ElementType::kInt16},
      {"<i4", Bytes<int32_t>({-5, 1 << 30}), ElementType::kInt32},
      {"|b1", Bytes<uint8_t>({1, 0}), ElementType::kBool},
      {"<i1", Bytes<int8_t>({3, -3}), ElementType::kInt8},
      {"=f4", Bytes<float>({1.0f, 2.0f}), ElementType::kFloat32},
  };
  for (const Case& test_case : cases) {
    SCOPED_TRACE(test_case.descr);
    WriteNpy("a.npy", test_case.descr, "(2,)", test_case.data);
    NumericArray array;
    const Status status = ReadNpyFile(PathOf("a.npy"), &array);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(array.type, test_case.type);
    EXPECT_EQ(array.shape, (std::vector<int64_t>{2}));
    EXPECT_EQ(std::string(array.bytes.begin(), array.bytes.end()), test_case.data);
  }
}

TEST_F(NpyFileTest, WidensUint16AndUint32) {
  WriteNpy("u2.npy", "<u2", "(2,)", Bytes<uint16_t>({0, 65535}));
  WriteNpy("u4.npy", "<u4", "(2,)", Bytes<uint32_t>({1, 4294967295u}));
  NumericArray array;
  ASSERT_TRUE(ReadNpyFile(PathOf("u2.npy"), &array).ok());
  EXPECT_EQ(array.type, ElementType::kInt32);
  EXPECT_EQ(Values<int32_t>(array), (std::vector<int32_t>{0, 65535}));
  ASSERT_TRUE(ReadNpyFile(PathOf("u4.npy"), &array).ok());
  EXPECT_EQ(array.type, ElementType::kInt64);
  EXPECT_EQ(Values<int64_t>(array), (std::vector<int64_t>{1, 4294967295LL}));
}

TEST_F(NpyFileTest, ToleratesSpacingKeyOrderQuotesAndPython2Longs) {
  const std::string dictionaries[] = {
      "{\"shape\" : ( 2 , 3L , ) ,'fortran_order':False,'descr':'<i4'}",
      "{'descr':'<i4','fortran_order':False,'shape':(2,3)}",
      "{ 'fortran_order': False,\n 'shape': (2L, 3L), 'descr': \"<i4\", }",
  };
  for (const std::string& dictionary : dictionaries) {
    SCOPED_TRACE(dictionary);
    WriteFile(PathOf("a.npy"), NpyFile(dictionary, Bytes<int32_t>({1, 2, 3, 4, 5, 6})));
    NumericArray array;
    const Status status = ReadNpyFile(PathOf("a.npy"), &array);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(Values<int32_t>(array), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  }
}

TEST_F(NpyFileTest, ReadsAnArrayWithoutElements) {
  WriteNpy("empty.npy", "<f4", "(0, 3)", "");
  NumericArray array;
  ASSERT_TRUE(ReadNpyFile(PathOf("empty.npy"), &array).ok());
  EXPECT_EQ(array.shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(array.bytes.empty());
}

TEST_F(NpyFileTest, RefusesMissingFilesAndFolders) {
  NumericArray array;
  ExpectBadInput(ReadNpyFile(PathOf("absent.npy"), &array), {PathOf("absent.npy"), "no such file"});
  ExpectBadInput(ReadNpyFile(dir_, &array), {dir_, "is a folder"});
}

TEST_F(NpyFileTest, RefusesBadMagicVersionsAndTruncatedHeaders) {
  const std::string good = NpyFile(Dictionary("<f4", "(1,)"), Bytes<float>({1.0f}));
  std::string wrong_magic = good;
  wrong_magic[1] = 'X';
  std::string version_4 = good;
  version_4[6] = 4;
  std::string version_1_1 = good;
  version_1_1[7] = 1;
  struct Case {
    std::string bytes;
    std::string expected;
  };
  const Case cases[] = {
      {wrong_magic, "not a .npy file"},
      {"PK\x03\x04 a zip file", "not a .npy file"},
      {"", "not a .npy file"},
      {version_4, "version 4.0"},
      {version_1_1, "version 1.1"},
      {good.substr(0, 8), "truncated header"},
      {good.substr(0, 40), "truncated header"},
  };
  for (const Case& test_case : cases) {
    SCOPED_TRACE(test_case.expected);
    WriteFile(PathOf("bad.npy"), test_case.bytes);
    NumericArray array;
    ExpectBadInput(ReadNpyFile(PathOf("bad.npy"), &array), {PathOf("bad.npy"), test_case.expected});
  }
}

TEST_F(NpyFileTest, RefusesTruncatedAndTrailingData) {
  WriteNpy("short.npy", "<f4", "(2, 3)", Bytes<float>({1, 2, 3, 4, 5}));
  WriteNpy("long.npy", "<f4", "(2, 3)", Bytes<float>({1, 2, 3, 4, 5, 6, 7}));
  NumericArray array;
  ExpectBadInput(ReadNpyFile(PathOf("short.npy"), &array),
                 {PathOf("short.npy"), "truncated data", "(2, 3)", "needs 24 bytes", "has 20"});
  ExpectBadInput(ReadNpyFile(PathOf("long.npy"), &array),
                 {PathOf("long.npy"), "trailing data", "needs 24 bytes", "has 28"});
}

TEST_F(NpyFileTest, RefusesFortranOrderBigEndianAndZeroDimensionalArrays) {
  WriteFile(PathOf("fortran.npy"),
            NpyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                    Bytes<float>({1, 2, 3, 4})));
  WriteNpy("big.npy", ">f4", "(1,)", Bytes<float>({1}));
  WriteNpy("scalar.npy", "<f4", "()", Bytes<float>({1}));
  NumericArray array;
  ExpectBadInput(ReadNpyFile(PathOf("fortran.npy"), &array),
                 {PathOf("fortran.npy"), "Fortran order", "np.ascontiguousarray"});
  ExpectBadInput(ReadNpyFile(PathOf("big.npy"), &array),
                 {PathOf("big.npy"), "big-endian", "'>f4'"});
  ExpectBadInput(ReadNpyFile(PathOf("scalar.npy"), &array), {PathOf("scalar.npy"), "0-d"});
}

TEST_F(NpyFileTest, RefusesUnsupportedDtypes) {
  struct Case {
    std::string descr;
    std::string expected;
  };
  const Case cases[] = {
      {"|O", "Python objects"},  {"<U3", "strings"},       {"|S4", "strings"},
      {"<c8", "complex"},        {"<c16", "complex"},      {"<M8[ns]", "dates"},
      {"|V8", "records"},        {"<u8", "uint64"},        {"<f2", "float16"},
      {"<f16", "not supported"}, {"|i4", "not supported"}, {"<x4", "not supported"},
      {"f4", "not supported"},   {"<i", "not supported"},  {"", "not supported"},
  };
  for (const Case& test_case : cases) {
    SCOPED_TRACE(test_case.descr);
    WriteNpy("a.npy", test_case.descr, "(1,)", std::string(8, '\0'));
    NumericArray array;
    ExpectBadInput(ReadNpyFile(PathOf("a.npy"), &array), {PathOf("a.npy"), test_case.expected});
  }
  WriteFile(PathOf("record.npy"),
            NpyFile("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, "
                    "'shape': (1,), }",
                    std::string(8, '\0')));
  NumericArray array;
  ExpectBadInput(ReadNpyFile(PathOf("record.npy"), &array), {PathOf("record.npy"), "structured"});
}

TEST_F(NpyFileTest, RefusesMalformedHeaders) {
  const std::string dictionaries[] = {
      "",
      "('descr', '<f4')",
      "{'descr': '<f4', 'fortran_order': False}",
      "{'descr': '<f4', 'shape': (1,)}",
      "{'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [1]}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} extra",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
      "{descr: '<f4', 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
  };
  for (const std::string& dictionary : dictionaries) {
    SCOPED_TRACE(dictionary);
    WriteFile(PathOf("a.npy"), NpyFile(dictionary, Bytes<float>({1})));
    NumericArray array;
    ExpectBadInput(ReadNpyFile(PathOf("a.npy"), &array), {PathOf("a.npy"), "malformed header"});
  }
}

TEST_F(NpyFileTest, RefusesAShapeTooLargeToAddress) {
  WriteNpy("huge.npy", "<f8", "(4611686018427387904, 4)", "");
  NumericArray array;
  ExpectBadInput(ReadNpyFile(PathOf("huge.npy"), &array), {PathOf("huge.npy"), "too large"});
}

TEST_F(NpyFileTest, ReadsFilesWrittenByNumpy) {
  if (!HaveNumpyAndH5py()) GTEST_SKIP() << "needs /usr/bin/python3 with numpy and h5py";
  ASSERT_TRUE(RunPython(R"(
import numpy as np
np.save('f4.npy', np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 4)
np.save('i8.npy', np.array([3, -1, 2**40]))
np.save('u1.npy', np.arange(250, 256, dtype=np.uint8).reshape(3, 2))
np.save('b1.npy', np.array([True, False, True]))
np.save('u2.npy', np.array([0, 65535], dtype=np.uint16))
np.save('sliced.npy', np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2])
for version in [(1, 0), (2, 0), (3, 0)]:
    with open('v%d.npy' % version[0], 'wb') as f:
        np.lib.format.write_array(f, np.arange(6, dtype=np.float64).reshape(3, 2), version=version)
np.save('fortran.npy', np.asfortranarray(np.ones((2, 3), dtype=np.float32)))
np.save('big.npy', np.ones(3, dtype='>i4'))
np.save('objects.npy', np.array([{'a': 1}, None]), allow_pickle=True)
np.save('text.npy', np.array(['ab', 'c']))
np.save('complex.npy', np.ones(2, dtype=np.complex64))
np.save('record.npy', np.zeros(2, dtype=[('a', '<f4'), ('b', '<i4')]))
np.save('scalar.npy', np.float32(1))
np.save('u8.npy', np.ones(2, dtype=np.uint64))
np.save('f2.npy', np.ones(2, dtype=np.float16))
)"));

  NumericArray array;
  ASSERT_TRUE(ReadNpyFile(PathOf("f4.npy"), &array).ok());
  EXPECT_EQ(array.type, ElementType::kFloat32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(Values<float>(array)[23], 5.75f);
  ASSERT_TRUE(ReadNpyFile(PathOf("i8.npy"), &array).ok());
  EXPECT_EQ(Values<int64_t>(array), (std::vector<int64_t>{3, -1, 1LL << 40}));
  ASSERT_TRUE(ReadNpyFile(PathOf("u1.npy"), &array).ok());
  EXPECT_EQ(array.type, ElementType::kUInt8);
  EXPECT_EQ(Values<uint8_t>(array), (std::vector<uint8_t>{250, 251, 252, 253, 254, 255}));
  ASSERT_TRUE(ReadNpyFile(PathOf("b1.npy"), &array).ok());
  EXPECT_EQ(array.type, ElementType::kBool);
  EXPECT_EQ(Values<uint8_t>(array), (std::vector<uint8_t>{1, 0, 1}));
  ASSERT_TRUE(ReadNpyFile(PathOf("u2.npy"), &array).ok());
  EXPECT_EQ(array.type, ElementType::kInt32);
  EXPECT_EQ(Values<int32_t>(array), (std::vector<int32_t>{0, 65535}));
  ASSERT_TRUE(ReadNpyFile(PathOf("sliced.npy"), &array).ok());
  EXPECT_EQ(array.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<int16_t>(array), (std::vector<int16_t>{0, 2, 4, 6, 8, 10}));
  for (const char* name : {"v1.npy", "v2.npy", "v3.npy"}) {
    SCOPED_TRACE(name);
    const Status status = ReadNpyFile(PathOf(name), &array);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(array.type, ElementType::kFloat64);
    EXPECT_EQ(array.shape, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(Values<double>(array), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  }

  struct Case {
    std::string name;
    std::string expected;
  };
  const Case refused[] = {
      {"fortran.npy", "np.ascontiguousarray"},
      {"big.npy", "big-endian"},
      {"objects.npy", "Python objects"},
      {"text.npy", "strings"},
      {"complex.npy", "complex"},
      {"record.npy", "structured"},
      {"scalar.npy", "0-d"},
      {"u8.npy", "uint64"},
      {"f2.npy", "float16"},
  };
  for (const Case& test_case : refused) {
    SCOPED_TRACE(test_case.name);
    ExpectBadInput(ReadNpyFile(PathOf(test_case.name), &array),
                   {PathOf(test_case.name), test_case.expected});
  }
}

using Hdf5ArraysTest = TempDirTest;

TEST_F(Hdf5ArraysTest, ReadsEveryNumericTypeWrittenByH5py) {
  if (!HaveNumpyAndH5py()) GTEST_SKIP() << "needs /usr/bin/python3 with numpy and h5py";
  ASSERT_TRUE(RunPython(R"(
import numpy as np, h5py
with h5py.File('types.h5', 'w') as f:
    f['f4'] = np.array([1.5, -2.25], dtype='<f4')
    f['f8'] = np.array([1e300, -0.5], dtype='<f8')
    f['i1'] = np.array([-128, 127], dtype='i1')
    f['u1'] = np.array([0, 255], dtype='u1')
    f['i2'] = np.array([-32768, 32767], dtype='<i2')
    f['i4'] = np.array([-2**31, 2**31 - 1], dtype='<i4')
    f['i8'] = np.array([-2**63, 2**63 - 1], dtype='<i8')
    f['b1'] = np.array([True, False])
    f['u2'] = np.array([0, 65535], dtype='<u2')
    f['u4'] = np.array([0, 2**32 - 1], dtype='<u4')
    f['big_i4'] = np.array([1, -2], dtype='>i4')
    f['big_f8'] = np.array([0.5, -3], dtype='>f8')
    f.create_dataset('group/gzip', data=np.arange(24, dtype='<f4').reshape(2, 3, 4),
                     compression='gzip', chunks=(1, 3, 2))
    f.create_dataset('no_rows', shape=(0, 3), dtype='<f4')
)"));
  Hdf5ArrayFile file;
  const std::string path = PathOf("types.h5");
  ASSERT_TRUE(Hdf5ArrayFile::Open(path, &file).ok());
  EXPECT_EQ(file.path(), path);
  EXPECT_TRUE(file.Contains("f4"));
  EXPECT_TRUE(file.Contains("group"));
  EXPECT_TRUE(file.Contains("group/gzip"));
  EXPECT_FALSE(file.Contains("group/absent"));
  EXPECT_FALSE(file.Contains("absent/gzip"));
  EXPECT_FALSE(file.Contains("f4/inside"));

  NumericArray array;
  auto read = [&](const std::string& name, ElementType type) {
    const Status status = file.Read(name, &array);
    EXPECT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(array.type, type) << name;
  };
  read("f4", ElementType::kFloat32);
  EXPECT_EQ(Values<float>(array), (std::vector<float>{1.5f, -2.25f}));
  read("f8", ElementType::kFloat64);
  EXPECT_EQ(Values<double>(array), (std::vector<double>{1e300, -0.5}));
  read("i1", ElementType::kInt8);
  EXPECT_EQ(Values<int8_t>(array), (std::vector<int8_t>{-128, 127}));
  read("u1", ElementType::kUInt8);
  EXPECT_EQ(Values<uint8_t>(array), (std::vector<uint8_t>{0, 255}));
  read("i2", ElementType::kInt16);
  EXPECT_EQ(Values<int16_t>(array), (std::vector<int16_t>{-32768, 32767}));
  read("i4", ElementType::kInt32);
  EXPECT_EQ(Values<int32_t>(array), (std::vector<int32_t>{INT32_MIN, INT32_MAX}));
  read("i8", ElementType::kInt64);
  EXPECT_EQ(Values<int64_t>(array), (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
  read("b1", ElementType::kBool);
  EXPECT_EQ(Values<uint8_t>(array), (std::vector<uint8_t>{1, 0}));
  read("u2", ElementType::kInt32);
  EXPECT_EQ(Values<int32_t>(array), (std::vector<int32_t>{0, 65535}));
  read("u4", ElementType::kInt64);
  EXPECT_EQ(Values<int64_t>(array), (std::vector<int64_t>{0, 4294967295LL}));
  read("big_i4", ElementType::kInt32);
  EXPECT_EQ(Values<int32_t>(array), (std::vector<int32_t>{1, -2}));
  read("big_f8", ElementType::kFloat64);
  EXPECT_EQ(Values<double>(array), (std::vector<double>{0.5, -3}));
  read("group/gzip", ElementType::kFloat32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(Values<float>(array)[23], 23.0f);
  read("no_rows", ElementType::kFloat32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{0, 3}));
}

TEST_F(Hdf5ArraysTest, RefusesNonNumericDatasetsNamingFileAndDataset) {
  if (!HaveNumpyAndH5py()) GTEST_SKIP() << "needs /usr/bin/python3 with numpy and h5py";
  ASSERT_TRUE(RunPython(R"(
import numpy as np, h5py
with h5py.File('refused.h5', 'w') as f:
    f['u8'] = np.ones(2, dtype='<u8')
    f['f2'] = np.ones(2, dtype='<f2')
    f['long_double'] = np.ones(2, dtype=np.longdouble)
    f['bytes'] = np.array([b'ab', b'cd'])
    f.create_dataset('text', data=['a', 'bc'], dtype=h5py.string_dtype())
    f['complex'] = np.ones(2, dtype='<c8')
    f['record'] = np.zeros(2, dtype=[('a', '<i4'), ('b', '<f4')])
    f.create_dataset('ragged', (2,), dtype=h5py.vlen_dtype(np.dtype('int32')))
    f['opaque'] = np.zeros(2, dtype='V3')
    f.create_dataset('colour', data=np.array([0, 1], dtype='i1'),
                     dtype=h5py.enum_dtype({'RED': 0, 'GREEN': 1}, basetype='i1'))
    f['scalar'] = np.float32(3)
    f['null'] = h5py.Empty('<f4')
    f.create_group('group')
)"));
  Hdf5ArrayFile file;
  const std::string path = PathOf("refused.h5");
  ASSERT_TRUE(Hdf5ArrayFile::Open(path, &file).ok());
  struct Case {
    std::string name;
    std::string expected;
  };
  const Case cases[] = {
      {"u8", "uint64"},          {"f2", "float16"},          {"long_double", "-byte floats"},
      {"bytes", "strings"},      {"text", "strings"},        {"complex", "compound"},
      {"record", "compound"},    {"ragged", "variable"},     {"opaque", "opaque"},
      {"colour", "enum"},        {"scalar", "0-d"},          {"null", "null dataspace"},
      {"group", "as a dataset"}, {"absent", "as a dataset"},
  };
  for (const Case& test_case : cases) {
    SCOPED_TRACE(test_case.name);
    NumericArray array;
    ExpectBadInput(file.Read(test_case.name, &array),
                   {path + ": " + test_case.name + ": ", test_case.expected});
  }
}

TEST_F(Hdf5ArraysTest, RefusesFilesThatAreNotHdf5) {
  WriteFile(PathOf("fake.h5"), "not an HDF5 file");
  Hdf5ArrayFile file;
  ExpectBadInput(Hdf5ArrayFile::Open(PathOf("fake.h5"), &file),
                 {PathOf("fake.h5"), "cannot open as an HDF5 file"});
  EXPECT_FALSE(HasHdf5Signature(PathOf("fake.h5")));
  EXPECT_FALSE(HasHdf5Signature(PathOf("absent.h5")));
}

TEST_F(Hdf5ArraysTest, FindsTheSignatureAfterAUserBlock) {
  if (!HaveNumpyAndH5py()) GTEST_SKIP() << "needs /usr/bin/python3 with numpy and h5py";
  ASSERT_TRUE(RunPython(R"(
import numpy as np, h5py
with h5py.File('plain.data', 'w') as f:
    f['train/x'] = np.ones((2, 2), dtype='<f4')
    f['train/y'] = np.array([0, 1])
with h5py.File('user_block.bin', 'w', userblock_size=1024) as f:
    f['train/x'] = np.ones((3, 2), dtype='<f4')
    f['train/y'] = np.array([0, 1, 1])
)"));
  EXPECT_TRUE(HasHdf5Signature(PathOf("plain.data")));
  EXPECT_TRUE(HasHdf5Signature(PathOf("user_block.bin")));
  ArrayDataset dataset;
  Status status = LoadArrayDataset(PathOf("plain.data"), &dataset);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(dataset.train.x.samples(), 2);
  status = LoadArrayDataset(PathOf("user_block.bin"), &dataset);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(dataset.train.x.samples(), 3);
}

using ArrayDatasetTest = TempDirTest;

TEST_F(ArrayDatasetTest, LoadsAFolderOfNpyFilesWithEverySplit) {
  std::string train_x;
  for (int i = 0; i < 3 * 2 * 2; ++i) train_x += Bytes<float>({static_cast<float>(i)});
  WriteNpy("train_x.npy", "<f4", "(3, 2, 2)", train_x);
  WriteNpy("train_y.npy", "<i8", "(3,)", Bytes<int64_t>({0, 2, 1}));
  WriteNpy("val_x.npy", "<f8", "(1, 2, 2)", Bytes<double>({1, 2, 3, 4}));
  WriteNpy("val_y.npy", "|u1", "(1,)", Bytes<uint8_t>({2}));
  WriteNpy("test_x.npy", "<f4", "(2, 2, 2)", std::string(32, '\0'));
  WriteNpy("test_y.npy", "|b1", "(2, 1)", Bytes<uint8_t>({0, 1}));
  WriteFile(PathOf("notes.npy"), "ignored: not a split's file");
  WriteFile(PathOf("README"), "ignored");

  ArrayDataset dataset;
  const Status status = LoadArrayDataset(dir_, &dataset);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(dataset.source, dir_);
  EXPECT_EQ(dataset.train.x.shape, (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(Values<float>(dataset.train.x)[11], 11.0f);
  EXPECT_EQ(Values<int64_t>(dataset.train.y), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(dataset.train.x_name, PathOf("train_x.npy"));
  EXPECT_EQ(dataset.train.y_name, PathOf("train_y.npy"));
  ASSERT_TRUE(dataset.validation.has_value());
  EXPECT_EQ(dataset.validation->x.type, ElementType::kFloat64);
  EXPECT_EQ(dataset.validation->y_name, PathOf("val_y.npy"));
  ASSERT_TRUE(dataset.test.has_value());
  EXPECT_EQ(dataset.test->y.shape, (std::vector<int64_t>{2, 1}));
}

TEST_F(ArrayDatasetTest, LoadsTrainAlone) {
  WriteNpy("train_x.npy", "<i4", "(2,)", Bytes<int32_t>({5, 6}));
  WriteNpy("train_y.npy", "<f4", "(2,)", Bytes<float>({0.5f, 1.5f}));
  ArrayDataset dataset;
  const Status status = LoadArrayDataset(dir_ + "/", &dataset);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(dataset.train.x.shape, (std::vector<int64_t>{2}));
  EXPECT_FALSE(dataset.validation.has_value());
  EXPECT_FALSE(dataset.test.has_value());
}

TEST_F(ArrayDatasetTest, RefusesPathsThatHoldNoDataSet) {
  ArrayDataset dataset;
  ExpectBadInput(LoadArrayDataset(PathOf("absent"), &dataset),
                 {PathOf("absent"), "no such file or folder"});
  WriteNpy("train_x.npy", "<f4", "(1,)", Bytes<float>({1}));
  ExpectBadInput(LoadArrayDataset(PathOf("train_x.npy"), &dataset),
                 {PathOf("train_x.npy"), "give the folder"});
  WriteFile(PathOf("data.csv"), "1,2\n");
  ExpectBadInput(LoadArrayDataset(PathOf("data.csv"), &dataset),
                 {PathOf("data.csv"), "neither an HDF5 file nor a folder"});
  WriteFile(PathOf("data.h5"), "not HDF5");
  ExpectBadInput(LoadArrayDataset(PathOf("data.h5"), &dataset),
                 {PathOf("data.h5"), "cannot open as an HDF5 file"});
}

TEST_F(ArrayDatasetTest, RefusesAFolderWithoutTrainArrays) {
  ArrayDataset dataset;
  ExpectBadInput(LoadArrayDataset(dir_, &dataset), {dir_ + ": no file train_x.npy"});
  WriteNpy("train_x.npy", "<f4", "(1,)", Bytes<float>({1}));
  ExpectBadInput(LoadArrayDataset(dir_, &dataset), {dir_ + ": no file train_y.npy"});
}

TEST_F(ArrayDatasetTest, RefusesASplitWithOnlyXOrOnlyY) {
  WriteNpy("train_x.npy", "<f4", "(1,)", Bytes<float>({1}));
  WriteNpy("train_y.npy", "<i8", "(1,)", Bytes<int64_t>({0}));
  WriteNpy("val_x.npy", "<f4", "(1,)", Bytes<float>({1}));
  ArrayDataset dataset;
  ExpectBadInput(LoadArrayDataset(dir_, &dataset),
                 {dir_ + ": no file val_y.npy", "val_x.npy is there"});
  std::filesystem::remove(PathOf("val_x.npy"));
  WriteNpy("test_y.npy", "<i8", "(1,)", Bytes<int64_t>({0}));
  ExpectBadInput(LoadArrayDataset(dir_, &dataset),
                 {dir_ + ": no file test_x.npy", "test_y.npy is there"});
}

TEST_F(ArrayDatasetTest, RefusesDifferentSampleCountsInASplit) {
  WriteNpy("train_x.npy", "<f4", "(3, 2)", std::string(24, '\0'));
  WriteNpy("train_y.npy", "<i8", "(2,)", Bytes<int64_t>({0, 1}));
  ArrayDataset dataset;
  ExpectBadInput(LoadArrayDataset(dir_, &dataset),
                 {PathOf("train_x.npy") + " has 3 samples", "train_y.npy has 2"});
}

TEST_F(ArrayDatasetTest, RefusesASplitWithoutSamples) {
  WriteNpy("train_x.npy", "<f4", "(0, 2)", "");
  WriteNpy("train_y.npy", "<i8", "(0,)", "");
  ArrayDataset dataset;
  ExpectBadInput(LoadArrayDataset(dir_, &dataset), {PathOf("train_x.npy"), "no samples", "(0, 2)"});
}

TEST_F(ArrayDatasetTest, RefusesValidationSamplesUnlikeTrainSamples) {
  WriteNpy("train_x.npy", "<f4", "(1, 2)", Bytes<float>({1, 2}));
  WriteNpy("train_y.npy", "<i8", "(1,)", Bytes<int64_t>({0}));
  WriteNpy("val_x.npy", "<f4", "(1, 3)", Bytes<float>({1, 2, 3}));
  WriteNpy("val_y.npy", "<i8", "(1,)", Bytes<int64_t>({0}));
  ArrayDataset dataset;
  ExpectBadInput(LoadArrayDataset(dir_, &dataset),
                 {PathOf("val_x.npy") + ": samples of shape (3,)", PathOf("train_x.npy"), "(2,)"});

  WriteNpy("val_x.npy", "<i4", "(1, 2)", Bytes<int32_t>({1, 2}));
  ExpectBadInput(LoadArrayDataset(dir_, &dataset),
                 {PathOf("val_x.npy") + ": int32", PathOf("train_x.npy") + " has float32"});

  WriteNpy("val_x.npy", "<f8", "(1, 2)", Bytes<double>({1, 2}));
  EXPECT_TRUE(LoadArrayDataset(dir_, &dataset).ok());
  WriteNpy("test_x.npy", "|u1", "(1, 2)", Bytes<uint8_t>({1, 2}));
  WriteNpy("test_y.npy", "<i8", "(1,)", Bytes<int64_t>({0}));
  ExpectBadInput(LoadArrayDataset(dir_, &dataset), {PathOf("test_x.npy") + ": uint8"});
}

TEST_F(ArrayDatasetTest, PassesOnReaderErrorsNamingTheFile) {
  WriteNpy("train_x.npy", ">f4", "(1,)", Bytes<float>({1}));
  WriteNpy("train_y.npy", "<i8", "(1,)", Bytes<int64_t>({0}));
  ArrayDataset dataset;
  ExpectBadInput(LoadArrayDataset(dir_, &dataset), {PathOf("train_x.npy"), "big-endian"});
}

TEST_F(ArrayDatasetTest, LoadsAnHdf5FileWrittenByH5py) {
  if (!HaveNumpyAndH5py()) GTEST_SKIP() << "needs /usr/bin/python3 with numpy and h5py";
  ASSERT_TRUE(RunPython(R"(
import numpy as np, h5py
with h5py.File('data.h5', 'w') as f:
    f['train/x'] = np.arange(60, dtype='<f4').reshape(5, 3, 4)
    f['train/y'] = np.array([0, 1, 2, 1, 0])
    f['val/x'] = np.zeros((2, 3, 4), dtype='<f8')
    f['val/y'] = np.array([True, False])
    f['notes'] = 'ignored'
    f['extra/z'] = np.arange(3)
    f['test/extra'] = np.arange(3)
)"));
  ArrayDataset dataset;
  const std::string path = PathOf("data.h5");
  const Status status = LoadArrayDataset(path, &dataset);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(dataset.source, path);
  EXPECT_EQ(dataset.train.x.type, ElementType::kFloat32);
  EXPECT_EQ(dataset.train.x.shape, (std::vector<int64_t>{5, 3, 4}));
  EXPECT_EQ(Values<float>(dataset.train.x)[59], 59.0f);
  EXPECT_EQ(Values<int64_t>(dataset.train.y), (std::vector<int64_t>{0, 1, 2, 1, 0}));
  EXPECT_EQ(dataset.train.x_name, path + ": train/x");
  ASSERT_TRUE(dataset.validation.has_value());
  EXPECT_EQ(dataset.validation->y.type, ElementType::kBool);
  EXPECT_EQ(dataset.validation->y_name, path + ": val/y");
  EXPECT_FALSE(dataset.test.has_value());
  int64_t classes = 0;
  ASSERT_TRUE(CheckClassLabels(dataset, &classes).ok());
  EXPECT_EQ(classes, 3);
}

TEST_F(ArrayDatasetTest, RefusesBadHdf5DataSetsNamingFileAndDataset) {
  if (!HaveNumpyAndH5py()) GTEST_SKIP() << "needs /usr/bin/python3 with numpy and h5py";
  ASSERT_TRUE(RunPython(R"(
import numpy as np, h5py
def write(name, **arrays):
    with h5py.File(name, 'w') as f:
        for key, value in arrays.items():
            f[key.replace('__', '/')] = value
x, y = np.ones((2, 3), dtype='<f4'), np.array([0, 1])
write('empty.h5', other=x)
write('no_x.h5', train__y=y)
write('no_y.h5', train__x=x)
write('val_x_only.h5', train__x=x, train__y=y, val__x=x)
write('test_y_only.h5', train__x=x, train__y=y, test__y=y)
write('counts.h5', train__x=x, train__y=np.array([0, 1, 2]))
write('strings.h5', train__x=np.array([b'a', b'b']), train__y=y)
write('no_samples.h5', train__x=np.ones((0, 3), dtype='<f4'), train__y=np.array([], dtype='<i8'))
write('val_shape.h5', train__x=x, train__y=y, val__x=np.ones((2, 4), dtype='<f4'), val__y=y)
write('test_type.h5', train__x=x, train__y=y, test__x=np.ones((2, 3), dtype='<i8'), test__y=y)
with h5py.File('x_is_group.h5', 'w') as f:
    f.create_group('train/x')
    f['train/y'] = y
)"));
  struct Case {
    std::string file;
    std::vector<std::string> expected;  // each right after the file's path in the message
  };
  const Case cases[] = {
      {"empty.h5", {": no dataset train/x"}},
      {"no_x.h5", {": no dataset train/x"}},
      {"no_y.h5", {": no dataset train/y"}},
      {"val_x_only.h5", {": no dataset val/y, though val/x is there"}},
      {"test_y_only.h5", {": no dataset test/x, though test/y is there"}},
      {"counts.h5", {": train/x has 2 samples but train/y has 3"}},
      {"strings.h5", {": train/x: the dataset holds strings"}},
      {"no_samples.h5", {": train/x: no samples"}},
      {"val_shape.h5", {": val/x: samples of shape (4,)", ": train/x has samples of shape (3,)"}},
      {"test_type.h5", {": test/x: int64", ": train/x has float32"}},
      {"x_is_group.h5", {": train/x: cannot open as a dataset"}},
  };
  for (const Case& test_case : cases) {
    SCOPED_TRACE(test_case.file);
    const std::string path = PathOf(test_case.file);
    ArrayDataset dataset;
    const Status status = LoadArrayDataset(path, &dataset);
    EXPECT_EQ(status.code(), Status::Code::kBadInput) << status.message();
    for (const std::string& part : test_case.expected) {
      EXPECT_NE(status.message().find(path + part), std::string::npos)
          << "'" << path + part << "' is not in: " << status.message();
    }
  }
}

// Writes splits of one-feature samples whose y (labels or targets) each test chooses.
class ArrayLabelsTest : public TempDirTest {
 protected:
  void WriteSplit(const std::string& split, const std::string& y_descr, const std::string& y_shape,
                  const std::string& y_data, int64_t samples) {
    WriteNpy(split + "_x.npy", "<f4", "(" + std::to_string(samples) + ", 1)",
             std::string(4 * samples, '\0'));
    WriteNpy(split + "_y.npy", y_descr, y_shape, y_data);
  }

  ArrayDataset Load() {
    ArrayDataset dataset;
    const Status status = LoadArrayDataset(dir_, &dataset);
    EXPECT_TRUE(status.ok()) << status.message();
    return dataset;
  }
};

TEST_F(ArrayLabelsTest, CountsClassesFromTrainLabels) {
  WriteSplit("train", "<i8", "(4,)", Bytes<int64_t>({0, 3, 1, 3}), 4);
  WriteSplit("val", "|u1", "(2, 1)", Bytes<uint8_t>({3, 0}), 2);
  WriteSplit("test", "<i2", "(1,)", Bytes<int16_t>({2}), 1);
  int64_t classes = 0;
  const Status status = CheckClassLabels(Load(), &classes);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(classes, 4);
}

TEST_F(ArrayLabelsTest, CountsTwoClassesForBoolLabels) {
  WriteSplit("train", "|b1", "(3, 1)", Bytes<uint8_t>({0, 1, 1}), 3);
  int64_t classes = 0;
  ASSERT_TRUE(CheckClassLabels(Load(), &classes).ok());
  EXPECT_EQ(classes, 2);
}

TEST_F(ArrayLabelsTest, RefusesFloatLabels) {
  WriteSplit("train", "<f4", "(2,)", Bytes<float>({0, 1}), 2);
  int64_t classes = 0;
  ExpectBadInput(CheckClassLabels(Load(), &classes),
                 {PathOf("train_y.npy") + ": float32 labels", "integers"});
}

TEST_F(ArrayLabelsTest, RefusesLabelsOfTheWrongShape) {
  WriteSplit("train", "<i8", "(1, 2)", Bytes<int64_t>({0, 1}), 1);
  int64_t classes = 0;
  ExpectBadInput(CheckClassLabels(Load(), &classes),
                 {PathOf("train_y.npy") + ": shape (1, 2)", "(N,) or (N, 1)"});
}

TEST_F(ArrayLabelsTest, RefusesNegativeLabelsNamingLabelAndSample) {
  WriteSplit("train", "<i8", "(2,)", Bytes<int64_t>({0, 1}), 2);
  WriteSplit("test", "|i1", "(3,)", Bytes<int8_t>({0, 1, -1}), 3);
  int64_t classes = 0;
  ExpectBadInput(CheckClassLabels(Load(), &classes),
                 {PathOf("test_y.npy") + ": label -1 of sample 2 is negative"});
}

TEST_F(ArrayLabelsTest, RefusesValidationAndTestLabelsBeyondTrainClasses) {
  WriteSplit("train", "<i4", "(2,)", Bytes<int32_t>({0, 4}), 2);
  WriteSplit("val", "<i8", "(2,)", Bytes<int64_t>({4, 5}), 2);
  int64_t classes = 0;
  ExpectBadInput(CheckClassLabels(Load(), &classes),
                 {PathOf("val_y.npy") + ": label 5 of sample 1 is not below 5",
                  "classes in " + PathOf("train_y.npy")});
  WriteSplit("val", "<i8", "(2,)", Bytes<int64_t>({4, 0}), 2);
  WriteSplit("test", "<i8", "(1,)", Bytes<int64_t>({7}), 1);
  ExpectBadInput(CheckClassLabels(Load(), &classes),
                 {PathOf("test_y.npy") + ": label 7 of sample 0 is not below 5"});
}

TEST_F(ArrayLabelsTest, CountsRegressionOutputs) {
  WriteSplit("train", "<f4", "(2,)", Bytes<float>({0.5f, 1}), 2);
  WriteSplit("val", "<i8", "(1, 1)", Bytes<int64_t>({3}), 1);
  int64_t outputs = 0;
  ASSERT_TRUE(CheckRegressionTargets(Load(), &outputs).ok());
  EXPECT_EQ(outputs, 1);

  WriteSplit("train", "<f8", "(2, 3)", std::string(48, '\0'), 2);
  WriteSplit("val", "<f4", "(1, 3)", std::string(12, '\0'), 1);
  ASSERT_TRUE(CheckRegressionTargets(Load(), &outputs).ok());
  EXPECT_EQ(outputs, 3);
}

TEST_F(ArrayLabelsTest, RefusesRegressionTargetsOfTheWrongTypeOrShape) {
  int64_t outputs = 0;
  WriteSplit("train", "|b1", "(2,)", Bytes<uint8_t>({0, 1}), 2);
  ExpectBadInput(CheckRegressionTargets(Load(), &outputs),
                 {PathOf("train_y.npy") + ": bool targets"});
  WriteSplit("train", "<f4", "(1, 2, 2)", std::string(16, '\0'), 1);
  ExpectBadInput(CheckRegressionTargets(Load(), &outputs),
                 {PathOf("train_y.npy") + ": shape (1, 2, 2)"});
  WriteSplit("train", "<f4", "(1, 0)", "", 1);
  ExpectBadInput(CheckRegressionTargets(Load(), &outputs),
                 {PathOf("train_y.npy") + ": shape (1, 0)", "k > 0"});
}

TEST_F(ArrayLabelsTest, RefusesADifferentNumberOfOutputsPerSplit) {
  WriteSplit("train", "<f4", "(1, 2)", std::string(8, '\0'), 1);
  WriteSplit("test", "<f4", "(1, 3)", std::string(12, '\0'), 1);
  int64_t outputs = 0;
  ExpectBadInput(
      CheckRegressionTargets(Load(), &outputs),
      {PathOf("test_y.npy") + ": 3 targets per sample", PathOf("train_y.npy") + " has 2"});
}

}  // namespace
}  // namespace hpo
