use braid::tokio;

async fn one() {}
async fn two() {}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn multi_pin() {
    tokio::pin! {
        let f1 = one();
        let f2 = two();
    }

    (&mut f1).await;
    (&mut f2).await;
}
