use clap::Parser;

fn main() {
    let cli = docdex::cli::Cli::parse();
    std::process::exit(docdex::cli::run(cli));
}
